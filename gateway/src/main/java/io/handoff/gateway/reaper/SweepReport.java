package io.handoff.gateway.reaper;

import io.handoff.gateway.session.store.SessionStore.ReapStep;

/** What one sweep did: how many sessions it expired, whose cleanup it claimed, which tombstones it purged. */
public record SweepReport(int expired, int cleanupsClaimed, int purged, int notDue, int gone) {

    public int acted() {
        return expired + cleanupsClaimed + purged;
    }

    static final class Tally {
        private int expired;
        private int cleanups;
        private int purged;
        private int notDue;
        private int gone;

        void add(ReapStep.Kind kind) {
            switch (kind) {
                case EXPIRED -> expired++;
                case CLEANUP_CLAIMED -> cleanups++;
                case PURGED -> purged++;
                case NOT_DUE -> notDue++;
                case GONE -> gone++;
            }
        }

        SweepReport report() {
            return new SweepReport(expired, cleanups, purged, notDue, gone);
        }
    }
}
