package io.handoff.gateway.orchestration;

import io.smallrye.mutiny.Uni;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Request ids on one replica: claimed once, and handed over when a run's end comes after its client's stream. */
class LiveRequestsTest {

    private final LiveRequests live = new LiveRequests();

    @Test
    void anIdRunningIsClaimedOnceAndFreedWhenItsRunLeaves() {
        LiveRequests.RequestHandle first = live.claim("t", "r").orElseThrow();

        assertTrue(live.claim("t", "r").isEmpty(), "a second claim while the first runs");
        assertTrue(live.claim("other", "r").isPresent(), "ids are per tenant");
        live.unregister("t", "r", first);
        assertTrue(live.claim("t", "r").isPresent());
    }

    @Test
    void anEndStillBeingWrittenFreesTheIdCountsTheRunAndHoldsBackTheNextAllocation() {
        LiveRequests.RequestHandle first = live.claim("t", "r").orElseThrow();
        CompletableFuture<Void> end = new CompletableFuture<>();

        live.endingAfterStream("t", "r", first, Uni.createFrom().completionStage(end));

        assertEquals(1, live.size(), "the run counts until its end lands");
        assertTrue(live.find("t", "r").isEmpty(), "Control.Abort has nothing left to stop");
        LiveRequests.RequestHandle retry = live.claim("t", "r").orElseThrow();
        assertEquals(2, live.size());
        AtomicInteger allocations = new AtomicInteger();
        CompletableFuture<String> allocated = retry.afterPreviousEnd(() -> {
            allocations.incrementAndGet();
            return Uni.createFrom().item("allocated");
        }).subscribeAsCompletionStage();
        assertEquals(0, allocations.get(), "the retry allocated before the first end landed");

        end.complete(null);

        assertEquals("allocated", allocated.join());
        assertEquals(1, allocations.get());
        assertEquals(1, live.size(), "only the retry runs");
    }

    @Test
    void aFailedEndStillLandsAndAClaimAfterItWaitsForNothing() {
        LiveRequests.RequestHandle first = live.claim("t", "r").orElseThrow();
        live.endingAfterStream("t", "r", first, Uni.createFrom().failure(new IllegalStateException("refused")));

        assertEquals(0, live.size(), "a failed end is no longer in flight");
        AtomicInteger allocations = new AtomicInteger();
        live.claim("t", "r").orElseThrow().afterPreviousEnd(() -> {
            allocations.incrementAndGet();
            return Uni.createFrom().voidItem();
        }).await().indefinitely();
        assertEquals(1, allocations.get());
    }
}
