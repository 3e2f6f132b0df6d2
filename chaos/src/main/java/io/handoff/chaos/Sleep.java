package io.handoff.chaos;

/** Waiting in the driver's own threads: polling a process or pacing the schedule, never a test's assertion. */
final class Sleep {
    private Sleep() {
    }

    static void millis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
