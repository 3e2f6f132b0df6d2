package io.handoff.connector.openai.completion;

import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.CandidateTokenSelection;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.ResponseOptions;
import io.handoff.openengine.v1.SamplingParams;
import io.handoff.openengine.v1.StopCondition;
import io.handoff.openengine.v1.StoppingOptions;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RequestFieldPathsTest {

    @Test
    void allPathsOpenTheOptionGroups() {
        var all = RequestFieldPaths.all();
        assertTrue(all.containsAll(Set.of("prompt", "token_ids", "sampling.temperature",
                "stopping.conditions.stop_text", "response.output_candidates.top_n", "guided.json_object", "media",
                "extra", "kv.session", "lora_name")), all.toString());
    }

    @Test
    void setPathsFollowPresence() {
        GenerateRequest r = GenerateRequest.newBuilder().setPrompt("hi")
                .setSampling(SamplingParams.newBuilder().setTemperature(0)) // explicitly zero still counts
                .setStopping(StoppingOptions.newBuilder()
                        .addConditions(StopCondition.newBuilder().setStopTokenId(2)))
                .setResponse(ResponseOptions.newBuilder()
                        .setOutputCandidates(CandidateTokenSelection.newBuilder().setTopN(3)))
                .build();
        assertEquals(Set.of("prompt", "sampling.temperature", "stopping.conditions.stop_token_id",
                "response.output_candidates.top_n"), RequestFieldPaths.setIn(r));
    }

    @Test
    void refusalNamesEveryUncarriedField() {
        GenerateRequest r = GenerateRequest.newBuilder().setPrompt("hi").setLoraName("a")
                .setSampling(SamplingParams.newBuilder().setTopK(3)).build();
        EngineException e = assertThrows(EngineException.class,
                () -> RequestFieldPaths.refuseOthers(r, Set.of("prompt"), "fam"));
        assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code());
        assertTrue(e.getMessage().contains("lora_name, sampling.top_k"), e.getMessage());
    }
}
