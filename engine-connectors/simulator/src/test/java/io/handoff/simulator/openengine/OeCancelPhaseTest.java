package io.handoff.simulator.openengine;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.handoff.openengine.v1.AbortRequest;
import io.handoff.openengine.v1.AbortStatus;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.simulator.Role;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Client cancels counted by phase on openengine: a cancelled Generate stream, or a Control.Abort naming a running
 * request. The prefill role's Generate is in its prefill until its PrefillReady; a Generate with kv.session is before
 * its first token while it pulls the KV, mid-stream once a TokenOutput went out. The phase is held still by a long
 * prefill, transfer or token interval.
 */
class OeCancelPhaseTest extends OeTestSupport {

    private static AbortRequest byId(String id) {
        return AbortRequest.newBuilder().setRequestId(id).build();
    }

    private OpenEngineSimEngine slowPrefill() {
        OpenEngineConfig c = cfg(Role.PREFILL);
        c.prefillLatencyMs = 60_000;
        return start(new OpenEngineSimEngine(c));
    }

    @Test
    void aPrefillCancelledByItsClientIsCancelledDuringPrefill() {
        OpenEngineSimEngine p = slowPrefill();
        OeClient.Stream s = client(p).generate(request("p", PROMPT, 4));
        awaitStat(p, "kv_sessions_pinned_now", 1);
        s.cancel();
        awaitCancels(p, 1, 0, 0);
    }

    @Test
    void anAbortOfARunningPrefillIsCancelledDuringPrefillOnce() {
        OpenEngineSimEngine p = slowPrefill();
        OeClient c = client(p);
        OeClient.Stream s = c.generate(request("p", PROMPT, 4));
        awaitStat(p, "kv_sessions_pinned_now", 1);
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED, c.control.abort(byId("p")).getStatus());
        s.awaitStatus();
        awaitCancels(p, 1, 0, 0);
    }

    @Test
    void anAbortOfParkedKvIsNoCancel() {
        OpenEngineConfig c = cfg(Role.PREFILL);
        c.abortCleanup = true;
        OpenEngineSimEngine p = start(new OpenEngineSimEngine(c));
        OeClient client = client(p);
        KvSessionRef ref = readyRef(client.run(request("p", PROMPT, 4)));
        client.control.abort(AbortRequest.newBuilder().setKvSession(ref).build());
        awaitStat(p, "freed_by_abort", 1);
        awaitCancels(p, 0, 0, 0);
    }

    @Test
    void aDecodeCancelledWhilePullingIsCancelledBeforeItsFirstToken() {
        OpenEngineConfig pc = cfg(Role.PREFILL);
        pc.transferLatencyMs = 60_000;
        OpenEngineSimEngine p = start(new OpenEngineSimEngine(pc));
        OpenEngineSimEngine d = engine(Role.DECODE);
        KvSessionRef ref = readyRef(client(p).run(request("p", PROMPT, 4)));
        OeClient.Stream s = client(d).generate(withSession(request("d", PROMPT, 4), ref));
        await().atMost(Duration.ofSeconds(10)).until(() -> p.holdsOfKind("pulling") == 1);
        s.cancel();
        awaitCancels(d, 0, 1, 0);
        awaitCancels(p, 0, 0, 0);
    }

    @Test
    void aDecodeCancelledOrAbortedAfterItsFirstTokenIsCancelledMidStream() {
        OpenEngineSimEngine p = engine(Role.PREFILL);
        OpenEngineConfig dc = cfg(Role.DECODE);
        dc.tokenIntervalMs = 60_000;
        OpenEngineSimEngine d = start(new OpenEngineSimEngine(dc));
        OeClient pc = client(p);
        OeClient dc1 = client(d);
        OeClient.Stream cancelled = dc1.generate(withSession(request("d1", PROMPT, 8),
            readyRef(pc.run(request("p1", PROMPT, 8)))));
        await().atMost(Duration.ofSeconds(10)).until(() -> cancelled.events.size() >= 1);
        cancelled.cancel();
        awaitCancels(d, 0, 0, 1);

        OeClient.Stream aborted = dc1.generate(withSession(request("d2", PROMPT, 8),
            readyRef(pc.run(request("p2", PROMPT, 8)))));
        await().atMost(Duration.ofSeconds(10)).until(() -> aborted.events.size() >= 1);
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED, dc1.control.abort(byId("d2")).getStatus());
        aborted.awaitStatus();
        awaitCancels(d, 0, 0, 2);
        awaitCancels(p, 0, 0, 0);
    }
}
