package io.handoff.connector.openai.completion;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.CandidateTokenSelection;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GuidedDecoding;
import io.handoff.openengine.v1.ResponseOptions;
import io.handoff.openengine.v1.SamplingParams;
import io.handoff.openengine.v1.StopCondition;
import io.handoff.openengine.v1.StoppingOptions;
import io.handoff.openengine.v1.TokenIds;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CompletionBodyBuilderTest {

    private final CompletionBodyBuilder builder = new CompletionBodyBuilder();

    @Test
    void commonFieldsUseTheSharedNames() {
        GenerateRequest r = GenerateRequest.newBuilder()
                .setTokenIds(TokenIds.newBuilder().addIds(1).addIds(2))
                .setSampling(SamplingParams.newBuilder().setTemperature(0.5).setSeed(-1L).setNumSequences(2))
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(9).setIgnoreEos(true)
                        .addConditions(StopCondition.newBuilder().setStopText("x"))
                        .addConditions(StopCondition.newBuilder().setStopTokenId(3)))
                .setExtra(Struct.newBuilder().putFields("priority", Value.newBuilder().setNumberValue(5).build()))
                .build();
        JsonNode body = builder.build(r, "route-model");
        assertEquivalent(Json.parse("""
                {"model":"route-model","prompt":[1,2],"temperature":0.5,"seed":18446744073709551615,"n":2,
                 "max_tokens":9,"stop":["x"],"stop_token_ids":[3],"ignore_eos":true,"priority":5}"""), body);
    }

    static void assertEquivalent(JsonNode expected, JsonNode actual) {
        assertTrue(Json.equivalent(expected, actual), "expected " + expected + " but was " + actual);
    }

    @Test
    void guidedAndLoraHaveNoCommonSpelling() {
        assertThrows(EngineException.class, () -> builder.build(GenerateRequest.newBuilder().setPrompt("p")
                .setGuided(GuidedDecoding.newBuilder().setRegex("a")).build(), "m"));
        assertThrows(EngineException.class, () -> builder.build(GenerateRequest.newBuilder().setPrompt("p")
                .setLoraName("l").build(), "m"));
    }

    @Test
    void aChatHasNoPromptItsMessagesComeFromExtraAndLogprobsAreChatShaped() {
        GenerateRequest r = GenerateRequest.newBuilder()
                .setSampling(SamplingParams.newBuilder().setTemperature(0))
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(9))
                .setResponse(ResponseOptions.newBuilder().setReturnOutputLogprobs(true)
                        .setOutputCandidates(CandidateTokenSelection.newBuilder().setTopN(3)))
                .setExtra(ChatRequestsTest.chat("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                        + "\"chat_template_kwargs\":{\"enable_thinking\":false}}"))
                .build();
        assertEquals(ChatRequests.CHAT_PATH, ChatRequests.path(r));
        assertEquivalent(Json.parse("""
                {"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.0,"max_tokens":9,
                 "logprobs":true,"top_logprobs":3,"chat_template_kwargs":{"enable_thinking":false}}"""),
                builder.build(r, "m"));
        GenerateRequest sampledOnly = r.toBuilder().setResponse(ResponseOptions.newBuilder()
                .setReturnOutputLogprobs(true)).build();
        assertEquals(Json.parse("true"), builder.build(sampledOnly, "m").get("logprobs"));
        assertEquals(null, builder.build(sampledOnly, "m").get("top_logprobs"));
    }

    @Test
    void aRequestWithNeitherPromptNorMessagesIsRefused() {
        EngineException e = assertThrows(EngineException.class,
                () -> builder.build(GenerateRequest.newBuilder().setModel("m").build(), "m"));
        assertEquals(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, e.code());
        assertEquals(ChatRequests.COMPLETIONS_PATH, ChatRequests.path(GenerateRequest.newBuilder().setPrompt("p")
                .build()));
    }

    @Test
    void extraMayNotOverrideATypedField() {
        GenerateRequest r = GenerateRequest.newBuilder().setPrompt("p")
                .setExtra(Struct.newBuilder().putFields("model", Value.newBuilder().setStringValue("x").build()))
                .build();
        assertThrows(EngineException.class, () -> builder.build(r, "m"));
    }
}
