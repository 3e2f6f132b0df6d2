package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.gateway.testing.WireMockEnginesProfile;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.mutiny.Uni;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The spacing of a lost probe's retries under its {@link ProbeGuard}: no sooner than the delay, spread either way by
 * the jitter; and what is not lost (a healthy answer, a verdict on the endpoint's role) is not asked again. The guard
 * is built here from its settings and given a probe that answers as scripted and notes when each try starts. Waits are
 * asserted from below only (SmallRye's timer never fires early; a busy machine fires it late). A {@code @QuarkusTest}
 * only because SmallRye Fault Tolerance builds a guard through CDI.
 */
@QuarkusTest
@TestProfile(WireMockEnginesProfile.class)
class ProbeGuardBackoffTest {

    private static final Duration PATIENCE = Duration.ofMinutes(2);
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Endpoint ENDPOINT = Endpoint.of("decode-0", "http://127.0.0.1:9");

    @Test
    void aLostProbeIsTriedAgainNoSoonerThanTheDelay() {
        ProbeGuard guard = new ProbeGuard(TIMEOUT, 1, Duration.ofMillis(300), Duration.ZERO);

        // several probes at once: with no jitter configured, none of them may wait less (SmallRye's default is 200 ms)
        List<TryTimes> probes = concurrently(guard, 30, "connection refused");

        for (TryTimes times : probes) {
            assertEquals(2, times.tries(), times.toString());
            assertTrue(times.gapsMs().get(0) >= 300, "the retry waits the delay: " + times);
        }
    }

    @Test
    void retriesAreSpreadByTheJitterEitherWay() {
        ProbeGuard guard = new ProbeGuard(TIMEOUT, 1, Duration.ofMillis(1_000), Duration.ofMillis(900));

        List<Long> waits = new ArrayList<>();
        for (TryTimes times : concurrently(guard, 60, "connection refused")) {
            assertEquals(2, times.tries(), times.toString());
            waits.add(times.gapsMs().get(0));
        }
        assertTrue(waits.stream().allMatch(w -> w >= 100), "no wait is shorter than delay - jitter: " + waits);
        // as in DischargeGuardBackoffTest: only the configured jitter gives a wait under 790 ms, and all 60 miss it
        // with a probability below 1e-9 if each were 100 ms late
        assertTrue(waits.stream().anyMatch(w -> w < 790), "some wait shortened by the jitter: " + waits);
        assertTrue(waits.stream().anyMatch(w -> w > 1_300), "some wait lengthened by the jitter: " + waits);
    }

    @Test
    void aHealthyAnswerOrAVerdictIsAskedOnce() {
        ProbeGuard guard = new ProbeGuard(TIMEOUT, 3, Duration.ofMillis(5), Duration.ZERO);
        EndpointStatus healthy = status(true, "ok");
        EndpointStatus wrongRole = status(false, EndpointVerdict.WRONG_ROLE + ": endpoint decode-0 answers as PREFILL");

        for (EndpointStatus answer : List.of(healthy, wrongRole)) {
            TryTimes times = new TryTimes();
            EndpointStatus got = probe(guard, times, answer).await().atMost(PATIENCE);

            assertEquals(answer, got);
            assertEquals(1, times.tries(), answer.detail() + ": " + times);
        }

        TryTimes lost = new TryTimes();
        EndpointStatus got = probe(guard, lost, status(false, "connection refused")).await().atMost(PATIENCE);
        assertFalse(got.healthy());
        assertEquals(4, lost.tries(), "a lost probe is asked again, 3 times: " + lost);
    }

    /** Runs {@code count} probes at once that every try answers unhealthy for {@code why}, and waits for them all. */
    private static List<TryTimes> concurrently(ProbeGuard guard, int count, String why) {
        List<TryTimes> probes = new ArrayList<>();
        List<Uni<EndpointStatus>> running = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            TryTimes times = new TryTimes();
            probes.add(times);
            running.add(probe(guard, times, status(false, why)));
        }
        Uni.join().all(running).andFailFast().await().atMost(PATIENCE);
        return probes;
    }

    private static Uni<EndpointStatus> probe(ProbeGuard guard, TryTimes times, EndpointStatus answer) {
        return guard.probe(ENDPOINT, () -> {
            times.started();
            return Uni.createFrom().item(answer);
        });
    }

    private static EndpointStatus status(boolean healthy, String detail) {
        return new EndpointStatus(ENDPOINT, healthy, Optional.empty(), List.of(), Optional.empty(), Map.of(), detail);
    }
}
