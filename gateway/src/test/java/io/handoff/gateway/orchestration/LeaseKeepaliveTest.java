package io.handoff.gateway.orchestration;

import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lease of a long decode: renewed by the replica that runs it once a third of the lease has passed, so the
 * reaper never expires it while the replica lives; once the renewals stop (the replica is dead) the lease runs out,
 * the reaper expires the session and its cleanup runs, and a run that learns its session ended stops its legs.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class LeaseKeepaliveTest extends FleetTestSupport {

    @Inject
    LeaseKeeper keeper;

    @Test
    void aLongDecodeIsKeptAliveWhileItsReplicaTicksAndExpiresWhenTicksStop() {
        FamilyEngines vllm = fleet().vllm();
        String id = requestId("lease");
        GenerateRequest request = request(FleetRoutes.VLLM_CONTEXT_FIRST, id, 4000).toBuilder()
                .setStopping(request(FleetRoutes.VLLM_CONTEXT_FIRST, id, 4000).getStopping().toBuilder()
                        .setIgnoreEos(true)).build();
        StreamingGenerate call = start(request);
        call.awaitTokens(1);
        Session attached = sessions.awaitOne(id, "ATTACHED", s -> s.state() == SessionState.ATTACHED);
        Duration lease = attached.lease();
        Instant firstExpiry = attached.leaseExpiresAt();

        // not yet a third through: nothing to renew
        clock.advance(lease.dividedBy(4));
        keeper.tick();
        assertEquals(firstExpiry, sessions.of(id).get(0).leaseExpiresAt());

        // past half the lease: renewed
        clock.advance(lease.dividedBy(4).plusSeconds(1));
        keeper.tick();
        Session renewed = sessions.awaitOne(id, "renewed", s -> s.leaseExpiresAt().isAfter(firstExpiry));
        assertEquals(clock.instant().plus(lease), renewed.leaseExpiresAt());

        // past the first expiry: a sweep leaves the renewed session alone
        clock.advance(lease.dividedBy(2));
        assertTrue(clock.instant().isAfter(firstExpiry));
        sweep();
        assertEquals(SessionState.ATTACHED, sessions.of(id).get(0).state());
        assertTrue(call.tokensReceived() < 4000 && !call.ended(), "the decode still streams");

        // the replica stops ticking: the lease runs out, the reaper expires the session and discharges its cleanup
        clock.advance(lease.plusSeconds(1));
        sweep();
        Session expired = sessions.awaitOne(id, "EXPIRED with its cleanup done",
                s -> s.state() == SessionState.EXPIRED && s.pendingObligations().isEmpty());
        assertTrue(expired.obligations().stream().allMatch(o -> o.status() == CleanupObligation.Status.ENGINE_HELD),
                expired.obligations().toString());

        // a replica that still runs the request learns at its next renewal, and stops the legs
        keeper.tick();
        List<GenerateResponse> events = call.awaitEnd();
        GenerateResponse last = events.get(events.size() - 1);
        assertEquals(FinishReason.FINISH_REASON_CANCELLED, last.getFinished().getReason(), last.toString());
        assertEquals(1, events.stream().filter(GenerateResponse::hasFinished).count());
        assertTrue(events.stream().noneMatch(e -> e.hasUsage() && e != last), "Usage only on the last event");
        assertEquals(SessionState.EXPIRED, sessions.of(id).get(0).state(), "the session ended once");
        awaitNothingRunning(vllm);
        awaitNoKvPinned(vllm);
        assertEquals(0, keeper.size());
    }
}
