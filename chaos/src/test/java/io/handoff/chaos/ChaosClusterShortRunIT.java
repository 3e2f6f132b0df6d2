package io.handoff.chaos;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The short chaos run on a Redis Cluster, in the build: three packaged gateway replicas on a cluster of three masters
 * with a replica each (their own six redis-server processes), the simulated fleet of every family, a modest mixed
 * load, replica kills, and in turn a graceful failover, a master's kill, an engine crash and cut streams. Fails when
 * an invariant broke or a Redis fault did not run. Every process it started is stopped at the end whatever happened
 * ({@link ChaosRun}'s own {@code finally}, and a shutdown hook for an aborted JVM).
 */
class ChaosClusterShortRunIT {

    @Test
    void everyInvariantHoldsOnARedisClusterUnderFailovers() throws Exception {
        Path jar = Path.of(System.getProperty("chaos.gateway.jar"));
        assertTrue(Files.isRegularFile(jar), "the packaged gateway is built before this module runs: " + jar);
        ChaosSettings settings = ChaosSettings.clusterShortRun(Path.of(System.getProperty("chaos.out") + "-cluster"),
                jar, System.getProperty("java.class.path"));
        Verdict v = new ChaosRun(settings).run();
        System.out.println(v.table());
        assertTrue(v.holds(), () -> "invariants broken: " + v.broken() + "\n" + v.table());
        assertTrue(figure(v, "fault redis-failover") >= 1, () -> "no graceful failover ran:\n" + v.table());
        assertTrue(figure(v, "fault redis-master-kill") >= 1, () -> "no master was killed:\n" + v.table());
    }

    private static long figure(Verdict v, String figure) {
        return v.rows().stream().filter(r -> r.name().equals(figure)).mapToLong(Verdict.Row::actual).findFirst()
                .orElseThrow(() -> new AssertionError("no figure '" + figure + "'"));
    }
}
