package io.handoff.gateway.runtime;

import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replica's view of the drain mark: reads of the store answer out of order, and one asked before this replica's own
 * start or stop of the drain must not undo it (DrainTest once saw its drain answered as not draining).
 */
class DrainStateTest {

    private static final Instant SINCE = Instant.parse("2026-12-08T00:00:00Z");

    private final DrainState state = new DrainState();

    @Test
    void aPollThatReadTheMarkBeforeThisReplicaStartedTheDrainDoesNotUndoIt() {
        long pollSent = state.readSent();
        state.set(SINCE);
        assertFalse(state.readAnswered(pollSent, null), "the poll read the store before the drain was written");
        assertTrue(state.draining());
    }

    @Test
    void aPollThatReadTheMarkBeforeThisReplicaStoppedTheDrainDoesNotRestartIt() {
        state.set(SINCE);
        long pollSent = state.readSent();
        state.set(null);
        assertFalse(state.readAnswered(pollSent, SINCE));
        assertFalse(state.draining());
    }

    @Test
    void aReadSentAfterThisReplicasWriteCountsWhateverItSays() {
        state.set(SINCE);
        long sentAfter = state.readSent();
        assertTrue(state.readAnswered(sentAfter, null), "another replica stopped the drain since");
        assertFalse(state.draining());
    }

    @Test
    void anOlderReadAnsweredAfterANewerOneIsIgnored() {
        long older = state.readSent();
        long newer = state.readSent();
        assertTrue(state.readAnswered(newer, SINCE));
        assertFalse(state.readAnswered(older, null));
        assertTrue(state.draining());
    }
}
