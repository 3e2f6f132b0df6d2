package io.handoff.connector.sglang;

import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.Leg;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.connector.tck.RendezvousContract;
import io.handoff.connector.tck.SimulatedFleet;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.handoff.connector.testsupport.Eventually.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SGLang in PD mode (bootstrap rendezvous), 300 s bootstrap and waiting timeouts, plus SGLang's own traps. */
class SglangContractTest extends RendezvousContract {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @Override
    protected ConnectorService service() {
        return new SglangConnectorService();
    }

    @Override
    protected SimulatedFleet startFleet(Vertx vertx) {
        return new SglangSimulatedFleet(vertx);
    }

    private SglangSimulatedFleet sim() {
        return (SglangSimulatedFleet) fleet;
    }

    private static EngineException failureOf(CompletableFuture<?> f) {
        Throwable t = assertThrows(ExecutionException.class,
                () -> f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)).getCause();
        return assertInstanceOf(EngineException.class, t);
    }

    @Test
    void theDecodeMayArriveAfterThePrefillInConcurrentStyle() {
        GenerateRequest request = request(10);
        Handoff handoff = plan(ScheduleStyle.CONCURRENT, request);
        var prefill = connector.prefill(handoff).subscribeAsCompletionStage();
        eventually("the prefill waits in its bootstrap queue", () -> fleet.engine(fleet.prefill()).pinnedBlocks() > 0);
        List<GenerateResponse> events = get(connector.decode(handoff).collect().asList().subscribeAsCompletionStage());
        get(prefill);
        assertEquals(fleet.aggregatedText(request), textOf(events));
        noKvPinned();
    }

    @Test
    void aParkedPrefillIsAbortedAndItsHoldsDischargedAtOnce() {
        Handoff handoff = plan(ScheduleStyle.GENERATION_FIRST, request(8));
        var prefill = connector.prefill(handoff).subscribeAsCompletionStage();
        eventually("the prefill pins its prompt", () -> fleet.engine(fleet.prefill()).pinnedBlocks() > 0);
        connector.abort(handoff, Leg.PREFILL).await().atMost(WAIT);
        EngineException e = failureOf(prefill);
        assertEquals(ErrorCode.ERROR_CODE_CANCELLED, e.code());
        assertEquals(2, e.held().size(), "the decode's and the prefill's possible holds");
        for (HeldKv held : e.held()) {
            assertTrue(held.releasable());
            assertEquals(DischargeResult.released(), connector.discharge(held).await().atMost(WAIT));
            assertEquals(DischargeResult.released(), connector.discharge(held).await().atMost(WAIT));
        }
        noKvPinned(); // without waiting for the 300 s bootstrap timeout
    }

    @Test
    void theGatewayCancelsTheWaitingDecodeWhenThePrefillFails() {
        sim().prefillEngine().faults().errorNext(500, 1);
        Handoff handoff = plan(ScheduleStyle.GENERATION_FIRST, request(8));
        var decode = connector.decode(handoff).collect().asList().subscribeAsCompletionStage();
        eventually("the decode preallocated", () -> fleet.engine(fleet.decode()).pinnedBlocks() > 0);
        EngineException e = assertThrows(EngineException.class,
                () -> connector.prefill(handoff).await().atMost(WAIT));
        assertTrue(e.held().stream().anyMatch(h -> h.endpoint().equals(fleet.decode())),
                "the waiting decode is reported as still holding");
        // SGLang would keep the decode for its 300 s waiting timeout: the gateway aborts the twin
        connector.abort(handoff, Leg.DECODE).await().atMost(WAIT);
        assertEquals(ErrorCode.ERROR_CODE_CANCELLED, failureOf(decode).code());
        noKvPinned();
    }

    @Test
    void aDecodeWhosePrefillNeverComesTimesOutAndFreesItsKv() {
        Handoff handoff = plan(ScheduleStyle.GENERATION_FIRST, request(8));
        var decode = connector.decode(handoff).collect().asList().subscribeAsCompletionStage();
        eventually("the decode preallocated", () -> fleet.engine(fleet.decode()).pinnedBlocks() > 0);
        passTheHold();
        EngineException e = failureOf(decode);
        assertEquals(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, e.code());
        assertFalse(e.retryable());
        noKvPinned();
    }

    @Test
    void aPrefillWhoseDecodeNeverComesTimesOut() {
        Handoff handoff = plan(ScheduleStyle.CONCURRENT, request(8));
        var prefill = connector.prefill(handoff).subscribeAsCompletionStage();
        eventually("the prefill pins its prompt", () -> fleet.engine(fleet.prefill()).pinnedBlocks() > 0);
        passTheHold();
        EngineException e = failureOf(prefill);
        assertTrue(e.sentToEngine());
        noKvPinned();
    }

    @Test
    void aDecodeWhosePrefillDiesFailsAndFreesItsKv() {
        Handoff handoff = plan(ScheduleStyle.GENERATION_FIRST, request(8));
        var decode = connector.decode(handoff).collect().asList().subscribeAsCompletionStage();
        eventually("the decode waits for its prefill", () -> fleet.engine(fleet.decode()).pinnedBlocks() > 0);
        fleet.engine(fleet.prefill()).crash(Duration.ofMillis(300));
        EngineException e = failureOf(decode);
        assertEquals(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, e.code());
        eventually("the producer restarted", () -> fleet.engine(fleet.prefill()).isUp());
        noKvPinned();
    }

    @Test
    void manyConcurrentHandoffsNeverShareARoom() {
        List<GenerateRequest> requests = new ArrayList<>();
        List<CompletableFuture<List<GenerateResponse>>> decodes = new ArrayList<>();
        List<CompletableFuture<?>> prefills = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            GenerateRequest r = request(6);
            requests.add(r);
            Handoff h = plan(i % 2 == 0 ? ScheduleStyle.CONCURRENT : ScheduleStyle.GENERATION_FIRST, r);
            decodes.add(connector.decode(h).collect().asList().subscribeAsCompletionStage());
            prefills.add(connector.prefill(h).subscribeAsCompletionStage());
        }
        for (int i = 0; i < requests.size(); i++) {
            get(prefills.get(i));
            assertEquals(fleet.aggregatedText(requests.get(i)), textOf(get(decodes.get(i))));
        }
        assertEquals(0, fleet.engine(fleet.prefill()).stat("duplicate_room_crashes"));
        assertEquals(0, fleet.engine(fleet.decode()).stat("duplicate_room_crashes"));
        noKvPinned();
    }
}
