package io.handoff.gateway.routing;

import io.handoff.connector.spi.DischargeResult;
import io.handoff.gateway.testing.WireMockEnginesProfile;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.mutiny.Uni;
import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The spacing of a discharge call's immediate retries under its {@link DischargeGuard}: each wait twice the one before,
 * never longer than the max delay, spread either way by the jitter, and all of them within half the claim TTL. The
 * guard is built here from its settings and given a call that answers as scripted and notes when each try starts.
 *
 * <p>Waits are asserted from below only: SmallRye's timer never fires early, while a busy machine fires it late. Where
 * an assertion needs tries to happen soon enough (the max delay, the budget), the settings leave a wide margin. A
 * {@code @QuarkusTest} only because SmallRye Fault Tolerance builds a guard through CDI; nothing else of the
 * application is used.
 */
@QuarkusTest
@TestProfile(WireMockEnginesProfile.class)
class DischargeGuardBackoffTest {

    private static final Duration PATIENCE = Duration.ofMinutes(2);

    @Test
    void eachWaitIsTwiceTheOneBefore() {
        DischargeGuard guard = new DischargeGuard(DischargeRetrySettings.retries(3, 200, 10_000, 0, 60_000));

        // several calls at once: with no jitter configured, none of them may wait less (SmallRye's default is 200 ms)
        List<TryTimes> calls = concurrently(20, times -> guard.discharge(() -> {
            int tryNumber = times.started();
            return Uni.createFrom().item(DischargeResult.retry("busy, try " + tryNumber));
        }));

        for (TryTimes times : calls) {
            assertEquals(4, times.tries(), times.toString());
            List<Long> gaps = times.gapsMs();
            assertTrue(gaps.get(0) >= 200, "the first retry waits the delay: " + times);
            assertTrue(gaps.get(1) >= 400, "the second twice as long: " + times);
            assertTrue(gaps.get(2) >= 800, "the third twice as long again: " + times);
        }
    }

    @Test
    void waitsStopGrowingAtTheMaxDelay() {
        // 20 retries: capped at 40 ms, their waits add up to 20 + 19 * 40 = 780 ms, well inside the 20 s budget;
        // doubling on, the 11th try would start after 20 * (2^10 - 1) ms = 20.5 s, past it
        DischargeGuard guard = new DischargeGuard(DischargeRetrySettings.retries(20, 20, 40, 0, 40_000));
        TryTimes times = new TryTimes();

        DischargeResult answer = guard.discharge(() -> {
            int tryNumber = times.started();
            return Uni.createFrom().failure(new ConnectException("connection refused, try " + tryNumber));
        }).await().atMost(PATIENCE);

        assertEquals(21, times.tries(), "every retry ran inside the budget: " + times);
        List<Long> gaps = times.gapsMs();
        assertTrue(gaps.get(0) >= 20, times.toString());
        for (int i = 1; i < gaps.size(); i++) {
            assertTrue(gaps.get(i) >= 40, "after the first, each wait is the max delay: " + times);
        }
        assertEquals(new DischargeResult(DischargeResult.Outcome.RETRY, null, "connection refused, try 21"), answer,
                "a failed try counts as RETRY, with the last try's reason");
    }

    @Test
    void retriesStopAtHalfTheClaimTtl() {
        // budget 3.4 s; tries start at 0, >= 500 and >= 1500 ms, and a 4th could start no sooner than 3500 ms, past
        // the budget: at most 3 of the 11 tries the retries alone would allow (5 within the whole claim TTL). The
        // max delay stays under the budget, which SmallRye requires
        DischargeGuard guard = new DischargeGuard(DischargeRetrySettings.retries(10, 500, 3_000, 0, 6_800));
        TryTimes times = new TryTimes();

        DischargeResult answer = guard.discharge(() -> {
            int tryNumber = times.started();
            return Uni.createFrom().item(DischargeResult.retry("busy, try " + tryNumber));
        }).await().atMost(PATIENCE);

        assertTrue(times.tries() <= 3, "the budget stopped the retries: " + times);
        assertTrue(times.tries() >= 2, "the first retry, 500 ms in, fits the 3.4 s budget: " + times);
        assertEquals(DischargeResult.retry("busy, try " + times.tries()), answer, "the last try's answer");
    }

    @Test
    void waitsAreSpreadByTheJitterEitherWay() {
        DischargeGuard guard = new DischargeGuard(DischargeRetrySettings.retries(1, 1_000, 5_000, 900, 60_000));

        List<TryTimes> calls = concurrently(60, times -> guard.discharge(() -> {
            times.started();
            return Uni.createFrom().item(DischargeResult.retry("busy"));
        }));

        List<Long> waits = new ArrayList<>();
        for (TryTimes times : calls) {
            assertEquals(2, times.tries(), times.toString());
            waits.add(times.gapsMs().get(0));
        }
        assertTrue(waits.stream().allMatch(w -> w >= 100), "no wait is shorter than delay - jitter: " + waits);
        // each wait is 1000 ms + a uniform draw in [-900, 900] + the machine's lateness; a wait under 790 ms comes
        // only from the configured jitter (none, or SmallRye's default 200 ms, cannot give it), and misses all 60
        // calls with a probability below 1e-9 if each were 100 ms late (1e-3 at 500 ms, which no timer here comes
        // near); a wait over 1300 ms is likelier still
        assertTrue(waits.stream().anyMatch(w -> w < 790), "some wait shortened by the jitter: " + waits);
        assertTrue(waits.stream().anyMatch(w -> w > 1_300), "some wait lengthened by the jitter: " + waits);
    }

    @Test
    void releasedAndEngineHoldsAreAnswersNotRetried() {
        DischargeGuard guard = new DischargeGuard(DischargeRetrySettings.retries(3, 5, 20, 0, 60_000));
        DischargeResult holds = DischargeResult.engineHoldsUntil(Instant.parse("2030-01-01T00:00:00Z"));

        for (DischargeResult answer : List.of(DischargeResult.released(), holds)) {
            TryTimes times = new TryTimes();
            DischargeResult got = guard.discharge(() -> {
                times.started();
                return Uni.createFrom().item(answer);
            }).await().atMost(PATIENCE);

            assertEquals(answer, got);
            assertEquals(1, times.tries(), answer.outcome() + " is asked once: " + times);
        }
    }

    /** Runs {@code count} guarded calls at once and waits for all of them; each notes its tries in its own times. */
    private static List<TryTimes> concurrently(int count, Function<TryTimes, Uni<DischargeResult>> call) {
        List<TryTimes> calls = new ArrayList<>();
        List<Uni<DischargeResult>> running = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            TryTimes times = new TryTimes();
            calls.add(times);
            running.add(call.apply(times));
        }
        Uni.join().all(running).andFailFast().await().atMost(PATIENCE);
        return calls;
    }
}
