package io.handoff.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A run whose faults include {@code replica-term} but that stopped no replica proved nothing of the graceful stop:
 * its verdict fails. A run without that fault only reports the figures.
 */
class TerminationsTest {

    private final History history = new History();
    private final Replicas noneStopped = new Replicas(0, Path.of("gateway.jar"), Path.of("replicas"), Map.of(),
            Map.of(), history);

    @Test
    void aRunWithReplicaTermButNoSigtermFails() {
        Verdict v = new Verdict();
        Terminations.check(history, noneStopped, true, v);
        assertFalse(v.holds(), v.table());
        assertEquals(List.of("replicas stopped with SIGTERM: expected >= 1, was 0",
                "  calls in flight at their SIGTERM: expected >= 1, was 0"), v.broken());
    }

    @Test
    void aRunWithoutReplicaTermOnlyReportsTheFigures() {
        Verdict v = new Verdict();
        Terminations.check(history, noneStopped, false, v);
        assertTrue(v.holds(), v.table());
    }
}
