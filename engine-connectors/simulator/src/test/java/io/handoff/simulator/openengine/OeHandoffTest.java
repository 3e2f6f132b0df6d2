package io.handoff.simulator.openengine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.grpc.Status;
import io.handoff.openengine.v1.EngineRole;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GetLoadRequest;
import io.handoff.openengine.v1.GetServerInfoRequest;
import io.handoff.openengine.v1.HealthRequest;
import io.handoff.openengine.v1.HealthState;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.LoadInfo;
import io.handoff.openengine.v1.SamplingParams;
import io.handoff.openengine.v1.ServerInfo;
import io.handoff.openengine.v1.TokenIds;
import io.handoff.simulator.Http;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimHttp;
import io.handoff.simulator.Tokenizer;
import io.handoff.simulator.vllm.VllmConfig;
import io.handoff.simulator.vllm.VllmEngine;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class OeHandoffTest extends OeTestSupport {

    @Test
    void prefillThenDecodeGivesTheVllmAggregatedTokensAndFreesOnPull() {
        VllmEngine agg = start(new VllmEngine(new VllmConfig()));
        ObjectNode body = Http.obj().put("model", "sim-model").put("prompt", PROMPT).put("max_tokens", 12);
        String expected = SimHttp.post(agg.baseUrl() + "/v1/completions", body).json.path("choices").get(0)
            .path("text").asText();
        OpenEngineSimEngine p = engine(Role.PREFILL);
        OpenEngineSimEngine d = engine(Role.DECODE);

        OeClient.Stream prefill = client(p).run(request("r1", PROMPT, 12));
        assertEquals(Status.OK.getCode(), prefill.awaitStatus().getCode());
        assertEquals(1, prefill.events.size(), "a prefill answers exactly one PrefillReady");
        KvSessionRef ref = readyRef(prefill);
        assertTrue(ref.getSessionId().startsWith("oe-kv-"));
        assertEquals(p.identity().instanceId(),
            ref.getAttributesStruct().getFieldsOrThrow("instance_id").getStringValue());
        long blocks = (Tokenizer.encode(PROMPT).length + 15) / 16;
        assertEquals(blocks, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.parkedSessions());

        OeClient.Stream decode = client(d).run(withSession(request("r1", PROMPT, 12), ref));
        assertEquals(Status.OK.getCode(), decode.awaitStatus().getCode());
        assertEquals(expected, text(decode.events));
        assertEquals(13, decode.events.size());
        for (GenerateResponse e : decode.events.subList(0, 12)) {
            assertTrue(e.hasToken() && e.getToken().hasOutputIndex() && !e.hasUsage());
        }
        GenerateResponse last = decode.events.get(12);
        assertEquals(FinishReason.FINISH_REASON_LENGTH, last.getFinished().getReason());
        assertEquals(12, last.getUsage().getCompletionTokens());
        assertEquals(Tokenizer.encode(PROMPT).length, last.getUsage().getPromptTokens());
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.stat("freed_by_pull"));
        assertEquals(0, d.stat("kv_blocks_pinned_now"));
    }

    @Test
    void decodeWithoutSessionPrefillsLocallyWithTheSameTokensAndTokenIdsEqualText() {
        OpenEngineSimEngine d = engine(Role.DECODE);
        OeClient c = client(d);
        OeClient.Stream text = c.run(request("a", PROMPT, 8));
        int[] ids = Tokenizer.encode(PROMPT);
        GenerateRequest byIds = request("b", "", 8).toBuilder()
            .setTokenIds(TokenIds.newBuilder().addAllIds(Arrays.stream(ids).boxed().toList())).build();
        OeClient.Stream tokens = c.run(byIds);
        assertEquals(text(text.events), text(tokens.events));
        assertEquals(2, d.stat(OpenEngineSimEngine.LOCAL_PREFILLS));
    }

    @Test
    void unknownSessionIsOneTerminalEngineErrorThenOk() {
        OpenEngineSimEngine p = engine(Role.PREFILL);
        OpenEngineSimEngine d = engine(Role.DECODE);
        KvSessionRef ref = readyRef(client(p).run(request("r", PROMPT, 4)));
        KvSessionRef bogus = ref.toBuilder().setSessionId("oe-kv-nope").build();
        OeClient.Stream s = client(d).run(withSession(request("r", PROMPT, 4), bogus));
        assertEquals(Status.Code.OK, s.awaitStatus().getCode());
        assertEquals(1, s.events.size());
        assertEquals(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND, s.events.get(0).getError().getCode());
        assertFalse(s.events.get(0).getError().getRetryable());
        assertEquals(0, d.stat("kv_blocks_pinned_now"));
    }

    @Test
    void parkedKvExpiresOnTheEngineTimerAndALateDecodeGetsSessionNotFound() {
        OpenEngineSimEngine p = engine(Role.PREFILL);
        OpenEngineSimEngine d = engine(Role.DECODE);
        KvSessionRef ref = readyRef(client(p).run(request("r", PROMPT, 4)));
        p.advanceClock(Duration.ofSeconds(59));
        assertEquals(1, p.parkedSessions());
        p.advanceClock(Duration.ofSeconds(2));
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.stat("freed_by_timeout"));
        OeClient.Stream s = client(d).run(withSession(request("r", PROMPT, 4), ref));
        assertEquals(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND, s.events.get(0).getError().getCode());
    }

    @Test
    void aSessionIsPulledOnceOnly() {
        OpenEngineSimEngine p = engine(Role.PREFILL);
        OpenEngineSimEngine d = engine(Role.DECODE);
        KvSessionRef ref = readyRef(client(p).run(request("r", PROMPT, 4)));
        assertEquals(Status.Code.OK, client(d).run(withSession(request("r", PROMPT, 4), ref)).awaitStatus().getCode());
        OeClient.Stream again = client(d).run(withSession(request("r2", PROMPT, 4), ref));
        assertEquals(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND, again.events.get(0).getError().getCode());
    }

    @Test
    void severalSequencesCarryTheirOutputIndexAndOutputZeroIsTheSingleAnswer() {
        OpenEngineSimEngine d = engine(Role.DECODE);
        OeClient c = client(d);
        String single = text(c.run(request("one", PROMPT, 5)).events);
        GenerateRequest two = request("two", PROMPT, 5).toBuilder()
            .setSampling(SamplingParams.newBuilder().setNumSequences(2)).build();
        OeClient.Stream s = c.run(two);
        assertEquals(single, text(s.events));
        assertEquals(12, s.events.size()); // 2 x 5 tokens + 2 finished
        long finished = s.events.stream().filter(GenerateResponse::hasFinished).count();
        assertEquals(2, finished);
        assertEquals(10, s.events.get(11).getUsage().getCompletionTokens());
        assertTrue(s.events.stream().limit(11).noneMatch(GenerateResponse::hasUsage));
    }

    @Test
    void controlReportsRoleConnectorLoadAndHealth() {
        OpenEngineSimEngine p = engine(Role.PREFILL);
        OeClient c = client(p);
        ServerInfo info = c.control.getServerInfo(GetServerInfoRequest.getDefaultInstance());
        assertEquals(EngineRole.ENGINE_ROLE_PREFILL, info.getEngineRole());
        assertEquals(p.identity().instanceId(), info.getInstanceId());
        assertFalse(info.getKvConnector().getSupportsAbortCleanup());
        assertTrue(info.getKvConnector().getSupportsDecodePull());
        assertTrue(info.getKvConnector().getSupportsRemotePrefill());
        assertFalse(info.getKvConnector().hasSupportsExplicitRelease(), "no Handoff additions on an engine");
        c.run(request("r", PROMPT, 4));
        LoadInfo load = c.control.getLoad(GetLoadRequest.getDefaultInstance());
        assertEquals(1, load.getActiveKvSessions());
        assertEquals(p.stat("kv_blocks_pinned_now"), load.getUsedKvBlocks());
        assertEquals(8192, load.getTotalKvBlocks());
        assertEquals(HealthState.HEALTH_STATE_READY, c.control.health(HealthRequest.getDefaultInstance()).getState());
        p.faults().healthStatus(503);
        assertEquals(HealthState.HEALTH_STATE_NOT_READY,
            c.control.health(HealthRequest.getDefaultInstance()).getState());
    }
}
