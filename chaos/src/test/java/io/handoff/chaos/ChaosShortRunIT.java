package io.handoff.chaos;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The short chaos run in the build: three packaged gateway replicas on one Redis, the simulated fleet of every
 * family, a modest mixed load and every fault. Fails when an invariant broke; the figures (counts) vary from run to
 * run and are printed, and written with the history to {@code target/chaos/}.
 */
class ChaosShortRunIT {

    @Test
    void everyInvariantHoldsUnderFaults() throws Exception {
        Path jar = Path.of(System.getProperty("chaos.gateway.jar"));
        assertTrue(Files.isRegularFile(jar), "the packaged gateway is built before this module runs: " + jar);
        ChaosSettings settings = ChaosSettings.shortRun(Path.of(System.getProperty("chaos.out")), jar,
                System.getProperty("java.class.path"));
        Verdict v = new ChaosRun(settings).run();
        System.out.println(v.table());
        assertTrue(v.holds(), () -> "invariants broken: " + v.broken() + "\n" + v.table());
    }
}
