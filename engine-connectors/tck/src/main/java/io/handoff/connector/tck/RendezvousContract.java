package io.handoff.connector.tck;

import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.Leg;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.handoff.connector.testsupport.Eventually.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contract for families whose prefill answers only once its decode took the KV (SGLang): no native style sends
 * the prefill alone, so the suite's cases that await a prefill by itself before the decode are run here with the
 * decode subscribed first, as the gateway runs these styles. Same assertions otherwise. (It lives in the suite's
 * package because those cases are package-private; a style-aware "ready" hook in {@link ConnectorContract} would
 * make this class unnecessary.)
 */
public abstract class RendezvousContract extends ConnectorContract {

    /** A handoff whose decode was subscribed first and whose prefill answered. */
    protected record Started(Handoff handoff, PrefillResult.Ready ready,
            CompletableFuture<List<GenerateResponse>> decode) {
    }

    protected ScheduleStyle rendezvousStyle() {
        return capabilities.nativeStyles().contains(ScheduleStyle.GENERATION_FIRST) ? ScheduleStyle.GENERATION_FIRST
                : ScheduleStyle.CONCURRENT;
    }

    protected Started start(GenerateRequest request, int firstEvents) {
        Handoff handoff = plan(rendezvousStyle(), request);
        var decode = firstEvents > 0
                ? connector.decode(handoff).select().first(firstEvents).collect().asList()
                : connector.decode(handoff).collect().asList();
        CompletableFuture<List<GenerateResponse>> events = decode.subscribeAsCompletionStage();
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                connector.prefill(handoff).await().atMost(Legs.WAIT));
        return new Started(handoff, ready, events);
    }

    protected static <T> T get(CompletableFuture<T> f) {
        try {
            return f.get(Legs.WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new AssertionError(e.getCause());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    protected static String textOf(List<GenerateResponse> events) {
        return Legs.text(events);
    }

    protected void noKvPinned() {
        eventually("no KV pinned", () -> fleet.engine(fleet.prefill()).pinnedBlocks() == 0
                && fleet.engine(fleet.decode()).pinnedBlocks() == 0);
    }

    @Override
    @Test
    void abortBetweenTheLegs() {
        Started s = start(request(8), 0);
        for (HeldKv held : s.ready().held()) {
            DischargeResult result = connector.discharge(held).await().atMost(Legs.WAIT);
            assertEquals(result, connector.discharge(held).await().atMost(Legs.WAIT), "discharge is idempotent");
            assertEquals(DischargeResult.Outcome.RELEASED, result.outcome(), String.valueOf(result.error()));
        }
        get(s.decode());
        noKvPinned();
    }

    @Override
    @Test
    void abortMidDecode() {
        long abortedBefore = fleet.engine(fleet.decode()).stat("requests_aborted");
        Started s = start(request(400), 3);
        assertEquals(3, get(s.decode()).size());
        connector.abort(s.handoff(), Leg.DECODE).await().atMost(Legs.WAIT);
        eventually("the consumer saw the abort",
                () -> fleet.engine(fleet.decode()).stat("requests_aborted") > abortedBefore);
        noKvPinned();
    }

    @Override
    @Test
    void producerDiesAfterReady() {
        GenerateRequest request = request(60);
        Started s = start(request, 0);
        fleet.engine(fleet.prefill()).crash(Duration.ofMillis(100));
        eventually("the producer restarted", () -> fleet.engine(fleet.prefill()).isUp());
        try {
            // the KV was written before the prefill answered: the consumer needs the producer no more
            assertEquals(fleet.aggregatedText(request), Legs.text(get(s.decode())), "silently wrong output");
        } catch (EngineException expected) {
            assertTrue(expected.sentToEngine() || expected.retryable(), expected.getMessage());
        }
    }

    @Override
    @Test
    void consumerDiesMidStream() throws Exception {
        Handoff handoff = plan(rendezvousStyle(), request(400));
        CompletableFuture<Void> firstToken = new CompletableFuture<>();
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        connector.decode(handoff).subscribe().with(e -> firstToken.complete(null), failure::complete,
                () -> failure.complete(null));
        assertInstanceOf(PrefillResult.Ready.class, connector.prefill(handoff).await().atMost(Legs.WAIT));
        crashTheConsumerAfterTheFirstToken(firstToken, failure);
    }
}
