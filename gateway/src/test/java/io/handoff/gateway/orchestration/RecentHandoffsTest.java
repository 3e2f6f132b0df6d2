package io.handoff.gateway.orchestration;

import io.handoff.gateway.orchestration.RecentHandoffs.EndedHandoff;
import io.handoff.gateway.session.SessionState;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecentHandoffsTest {

    private static final Instant ENDED = Instant.parse("2026-12-01T10:00:00Z");

    private static void end(RecentHandoffs recent, String requestId) {
        recent.add(requestId, "route-a", "context-first", "p-0", "d-0", "s-" + requestId, SessionState.COMPLETE, ENDED,
                System.nanoTime(), "trace");
    }

    private static List<String> requestIds(List<EndedHandoff> handoffs) {
        return handoffs.stream().map(EndedHandoff::requestId).toList();
    }

    @Test
    void theNewestComeFirstAndAsManyAsAsked() {
        RecentHandoffs recent = new RecentHandoffs();
        assertEquals(List.of(), recent.newestFirst(10));
        end(recent, "r1");
        end(recent, "r2");
        end(recent, "r3");
        assertEquals(List.of("r3", "r2", "r1"), requestIds(recent.newestFirst(10)));
        assertEquals(List.of("r3", "r2"), requestIds(recent.newestFirst(2)));
        EndedHandoff newest = recent.newestFirst(1).get(0);
        assertEquals("p-0", newest.prefill());
        assertEquals(SessionState.COMPLETE, newest.state());
        assertTrue(!newest.duration().isNegative());
    }

    @Test
    void onlyTheLastCapacityAreKept() {
        RecentHandoffs recent = new RecentHandoffs();
        int total = RecentHandoffs.CAPACITY * 2 + 7;
        IntStream.range(0, total).forEach(i -> end(recent, "r" + i));
        List<String> kept = requestIds(recent.newestFirst(Integer.MAX_VALUE));
        assertEquals(RecentHandoffs.CAPACITY, kept.size());
        assertEquals("r" + (total - 1), kept.get(0));
        assertEquals("r" + (total - RecentHandoffs.CAPACITY), kept.get(kept.size() - 1));
    }

    @Test
    void writersRacingNeverMakeAReaderSeeAnEntryTwiceOrOutOfOrder() throws InterruptedException {
        RecentHandoffs recent = new RecentHandoffs();
        ExecutorService writers = Executors.newFixedThreadPool(4);
        for (int w = 0; w < 4; w++) {
            int writer = w;
            writers.submit(() -> IntStream.range(0, 5_000).forEach(i -> end(recent, writer + "-" + i)));
        }
        writers.shutdown();
        while (!writers.awaitTermination(10, TimeUnit.MILLISECONDS)) {
            List<EndedHandoff> seen = recent.newestFirst(RecentHandoffs.CAPACITY);
            for (int i = 1; i < seen.size(); i++) {
                assertTrue(seen.get(i - 1).sequence() > seen.get(i).sequence(), "newest first, each once");
            }
        }
        assertEquals(RecentHandoffs.CAPACITY, recent.newestFirst(RecentHandoffs.CAPACITY).size());
    }
}
