package io.handoff.gateway.orchestration;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.helpers.test.AssertSubscriber;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MapOrDropTest {

    @Test
    void aDroppedItemIsReplacedSoTheDemandIsStillMet() {
        AtomicLong asked = new AtomicLong();
        Multi<Integer> numbers = Multi.createFrom().items(1, 2, 3, 4, 5, 6).onRequest().invoke(asked::addAndGet);
        AssertSubscriber<String> client = MapOrDrop.of(numbers, (Integer n) -> n % 2 == 0 ? null : "n" + n)
                .subscribe().withSubscriber(AssertSubscriber.create(2));

        assertEquals(List.of("n1", "n3"), client.getItems());
        assertEquals(3, asked.get(), "two wanted, one dropped on the way");
        client.assertNotTerminated();

        client.request(5);
        client.assertCompleted();
        assertEquals(List.of("n1", "n3", "n5"), client.getItems());
    }

    @Test
    void aMappingThatThrowsCancelsTheUpstreamAndFails() {
        AtomicBoolean cancelled = new AtomicBoolean();
        Multi<Integer> numbers = Multi.createFrom().<Integer>emitter(em -> {
            em.emit(1);
            em.emit(2);
            em.emit(3);
        }).onCancellation().invoke(() -> cancelled.set(true));
        AssertSubscriber<Integer> client = MapOrDrop.of(numbers, (Integer n) -> {
            if (n == 2) {
                throw new IllegalStateException("two");
            }
            return n;
        }).subscribe().withSubscriber(AssertSubscriber.create(10));

        client.assertFailedWith(IllegalStateException.class, "two");
        assertEquals(List.of(1), client.getItems());
        assertTrue(cancelled.get());
    }

    @Test
    void cancellingPassesUpstream() {
        AtomicBoolean cancelled = new AtomicBoolean();
        Multi<Integer> endless = Multi.createFrom().<Integer>emitter(em -> em.emit(1))
                .onCancellation().invoke(() -> cancelled.set(true));
        AssertSubscriber<Integer> client = MapOrDrop.of(endless, (Integer n) -> n)
                .subscribe().withSubscriber(AssertSubscriber.create(5));
        client.cancel();
        assertTrue(cancelled.get());
        assertEquals(List.of(1), client.getItems());
    }
}
