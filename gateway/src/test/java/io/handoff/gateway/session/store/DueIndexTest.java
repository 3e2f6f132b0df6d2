package io.handoff.gateway.session.store;

import io.handoff.gateway.session.store.SessionStore.DueEntry;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class DueIndexTest {

    private static final Instant T0 = Instant.parse("2026-12-03T18:00:00Z");

    private static List<String> ids(List<DueEntry> due) {
        return due.stream().map(DueEntry::sessionId).toList();
    }

    @Test
    void nothingComesOutBeforeItsTimeEvenInTheTickOfNow() {
        DueIndex index = new DueIndex();
        index.file("late", T0.plusMillis(600)); // same tick as "early"
        index.file("early", T0.plusMillis(10));

        assertEquals(List.of(), ids(index.due(T0.plusMillis(9), 10)));
        assertEquals(List.of("early"), ids(index.due(T0.plusMillis(10), 10)));
        assertEquals(List.of("early"), ids(index.due(T0.plusMillis(599), 10)));
        assertEquals(List.of("late", "early"), ids(index.due(T0.plusMillis(600), 10)));
        assertEquals(T0.plusMillis(10), index.due(T0.plusMillis(10), 10).get(0).due());
    }

    @Test
    void olderTicksComeFirstAndTheLimitHolds() {
        DueIndex index = new DueIndex();
        index.file("c", T0.plusSeconds(3));
        index.file("a", T0.plusSeconds(1));
        index.file("b", T0.plusSeconds(2));

        assertEquals(List.of("a", "b"), ids(index.due(T0.plusSeconds(10), 2)));
        assertEquals(List.of("a", "b", "c"), ids(index.due(T0.plusSeconds(10), 10)));
    }

    @Test
    void removingForgetsAndFilingAgainMoves() {
        DueIndex index = new DueIndex();
        index.file("s", T0.plusSeconds(1));
        index.remove("s", T0.plusSeconds(1));
        index.file("s", T0.plusSeconds(5));

        assertEquals(List.of(), ids(index.due(T0.plusSeconds(4), 10)), "moved, not copied");
        assertEquals(List.of("s"), ids(index.due(T0.plusSeconds(5), 10)));

        index.remove("s", T0.plusSeconds(5));
        index.remove("s", T0.plusSeconds(5));
        index.remove("other", T0.plusSeconds(9));
        assertEquals(List.of(), ids(index.due(T0.plusSeconds(60), 10)));
    }

    @Test
    void emptiedTicksAreReusedAndDroppedOnceTheyAreTheOldest() {
        DueIndex index = new DueIndex();
        for (int i = 0; i < 100; i++) { // short requests: each files into the lease tick and leaves it empty
            index.file("r" + i, T0.plusSeconds(30));
            index.remove("r" + i, T0.plusSeconds(30));
        }
        assertEquals(1, index.ticksHeld(), "the emptied lease tick is kept and filed into again");

        index.file("tombstone", T0.plusSeconds(600));
        assertEquals(1, index.ticksHeld(), "making a tick drops the empty oldest one");

        index.file("x", T0.plusSeconds(20));
        index.remove("x", T0.plusSeconds(20));
        index.file("y", T0.plusSeconds(40));
        assertEquals(2, index.ticksHeld(), "the empty oldest tick went; the tombstone's did not");

        index.remove("y", T0.plusSeconds(40));
        assertEquals(List.of("tombstone"), ids(index.due(T0.plusSeconds(700), 10)));
        assertEquals(1, index.ticksHeld(), "the walk to what is due dropped the empty tick it passed");
        assertEquals(List.of(), ids(index.due(T0.plusSeconds(599), 10)));
    }

    @Test
    void instantsBeforeTheEpochFileIntoTheirOwnTicks() {
        DueIndex index = new DueIndex();
        Instant before = Instant.ofEpochMilli(-150);
        index.file("old", before);

        assertEquals(List.of(), ids(index.due(Instant.ofEpochMilli(-151), 10)));
        assertEquals(List.of("old"), ids(index.due(Instant.ofEpochMilli(-150), 10)));
    }
}
