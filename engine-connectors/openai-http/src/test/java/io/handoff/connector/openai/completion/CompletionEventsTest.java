package io.handoff.connector.openai.completion;

import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateResponse;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CompletionEventsTest {

    @Test
    void twoOutputsStreamDeltasOneFinishEachAndUsageLast() {
        CompletionEvents mapper = new CompletionEvents("r");
        List<GenerateResponse> events = new ArrayList<>();
        for (String chunk : List.of(
                "{\"choices\":[{\"index\":0,\"text\":\"Hel\",\"token_ids\":[5,6],\"finish_reason\":null}]}",
                "{\"choices\":[{\"index\":1,\"text\":\"Yo\",\"token_ids\":[9],\"finish_reason\":null}]}",
                "{\"choices\":[{\"index\":0,\"text\":\"lo\",\"token_ids\":[7],\"finish_reason\":\"stop\","
                        + "\"stop_reason\":2}]}",
                "{\"choices\":[{\"index\":1,\"text\":\"\",\"finish_reason\":\"length\"}]}",
                "{\"choices\":[{\"index\":1,\"text\":\"\",\"finish_reason\":\"length\"}]}",
                "{\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":4,\"total_tokens\":8,"
                        + "\"prompt_tokens_details\":{\"cached_tokens\":2}}}")) {
            events.addAll(mapper.accept(Json.parse(chunk)));
        }
        events.addAll(mapper.end());

        assertEquals(5, events.size());
        assertEquals("Hel", events.get(0).getToken().getText());
        assertEquals(List.of(5, 6), events.get(0).getToken().getTokensList().stream().map(t -> t.getTokenId()).toList());
        assertEquals(1, events.get(1).getToken().getOutputIndex());
        assertEquals("lo", events.get(2).getToken().getText());
        assertEquals(FinishReason.FINISH_REASON_STOP, events.get(3).getFinished().getReason());
        assertEquals(2, events.get(3).getFinished().getStopMatch().getStopTokenId());
        assertEquals(FinishReason.FINISH_REASON_LENGTH, events.get(4).getFinished().getReason());
        assertEquals(1, events.get(4).getFinished().getOutputIndex());
        assertTrue(events.get(4).hasUsage(), "the duplicate finish of output 1 is dropped; usage rides the last");
        for (int i = 0; i < events.size() - 1; i++) {
            assertFalse(events.get(i).hasUsage(), "usage only on the last event");
        }
    }

    /** No token waits for the next chunk: only the finishes wait, for the usage that follows them. */
    @Test
    void aTokenGoesOutWithTheChunkThatBringsIt() {
        CompletionEvents mapper = new CompletionEvents("r");
        List<GenerateResponse> first = mapper.accept(Json.parse(
                "{\"choices\":[{\"index\":0,\"text\":\"one\",\"finish_reason\":null}]}"));
        assertEquals(1, first.size());
        assertEquals("one", first.get(0).getToken().getText());
        List<GenerateResponse> last = mapper.accept(Json.parse(
                "{\"choices\":[{\"index\":0,\"text\":\"two\",\"finish_reason\":\"length\"}]}"));
        assertEquals(1, last.size(), "the token at once, its finish held for the usage");
        assertEquals("two", last.get(0).getToken().getText());
        assertTrue(mapper.accept(Json.parse("{\"choices\":[],\"usage\":{\"prompt_tokens\":1,"
                + "\"completion_tokens\":2,\"total_tokens\":3}}")).isEmpty());
        List<GenerateResponse> end = mapper.end();
        assertEquals(1, end.size());
        assertEquals(FinishReason.FINISH_REASON_LENGTH, end.get(0).getFinished().getReason());
        assertEquals(3, end.get(0).getUsage().getTotalTokens());
    }

    @Test
    void lastEventCarriesUsage() {
        CompletionEvents mapper = new CompletionEvents("r");
        mapper.accept(Json.parse("{\"choices\":[{\"index\":0,\"text\":\"a\",\"finish_reason\":\"stop\","
                + "\"stop_reason\":\"END\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}"));
        List<GenerateResponse> last = mapper.end();
        assertEquals(1, last.size());
        assertTrue(last.get(0).hasFinished());
        assertEquals("END", last.get(0).getFinished().getStopMatch().getStopText());
        assertEquals(4, last.get(0).getUsage().getTotalTokens());
    }

    @Test
    void completionLogprobsBecomeTokenInfo() {
        CompletionEvents mapper = new CompletionEvents("r");
        GenerateResponse e = mapper.accept(Json.parse("{\"choices\":[{\"index\":0,\"text\":\" a\","
                + "\"token_ids\":[42],\"logprobs\":{\"tokens\":[\" a\"],\"token_logprobs\":[-0.5],"
                + "\"top_logprobs\":[{\" a\":-0.5,\" b\":-1.5}]},\"finish_reason\":null}]}")).get(0);
        var info = e.getToken().getTokens(0);
        assertEquals(42, info.getTokenId());
        assertEquals(" a", info.getToken());
        assertEquals(-0.5, info.getLogprob());
        assertEquals(2, info.getCandidatesCount());
    }

    @Test
    void chatChunksBecomeTheSameEvents() {
        CompletionEvents mapper = new CompletionEvents("r");
        List<GenerateResponse> events = new ArrayList<>();
        for (String chunk : List.of(
                "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                        + "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}",
                "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},"
                        + "\"token_ids\":[5],\"logprobs\":{\"content\":[{\"token\":\"Hel\",\"logprob\":-0.25,"
                        + "\"top_logprobs\":[{\"token\":\"Hel\",\"logprob\":-0.25},{\"token\":\"Yo\",\"logprob\":-2}]}]},"
                        + "\"finish_reason\":null}]}",
                "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},"
                        + "\"finish_reason\":\"length\",\"stop_reason\":null}]}",
                "{\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":6,"
                        + "\"completion_tokens\":2,\"total_tokens\":8}}")) {
            events.addAll(mapper.accept(Json.parse(chunk)));
        }
        events.addAll(mapper.end());

        assertEquals(3, events.size(), "the role-only chunk is no event");
        assertEquals("Hel", events.get(0).getToken().getText());
        assertEquals(5, events.get(0).getToken().getTokens(0).getTokenId());
        assertEquals(-0.25, events.get(0).getToken().getTokens(0).getLogprob());
        assertEquals(2, events.get(0).getToken().getTokens(0).getCandidatesCount());
        assertEquals("lo", events.get(1).getToken().getText());
        assertEquals(FinishReason.FINISH_REASON_LENGTH, events.get(2).getFinished().getReason());
        assertEquals(8, events.get(2).getUsage().getTotalTokens());
    }

    @Test
    void aWholeChatAnswerIsReadFromItsMessage() {
        List<GenerateResponse> events = CompletionStreams.events(Json.parse("{\"object\":\"chat.completion\","
                + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\" a b\","
                + "\"tool_calls\":[]},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,"
                + "\"completion_tokens\":2,\"total_tokens\":5}}"), "r");
        assertEquals(2, events.size());
        assertEquals(" a b", events.get(0).getToken().getText());
        assertEquals(FinishReason.FINISH_REASON_STOP, events.get(1).getFinished().getReason());
        assertEquals(5, events.get(1).getUsage().getTotalTokens());
    }

    @Test
    void toolCallsFailTheStreamRatherThanVanish() {
        CompletionEvents mapper = new CompletionEvents("r");
        EngineException e = assertThrows(EngineException.class, () -> mapper.accept(Json.parse(
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\","
                        + "\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}")));
        assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code());
        assertTrue(e.sentToEngine());
        assertFalse(e.retryable());
    }

    @Test
    void errorFinishFailsTheStream() {
        CompletionEvents mapper = new CompletionEvents("r");
        assertThrows(EngineException.class, () -> mapper.accept(Json.parse(
                "{\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"error\"}]}")));
    }
}
