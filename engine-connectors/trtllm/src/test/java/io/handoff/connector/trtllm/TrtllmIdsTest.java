package io.handoff.connector.trtllm;

import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.GenerateRequest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** disagg_request_id: unique under concurrency, always in the global id space [2^40, 2^63). */
class TrtllmIdsTest {

    private static final int THREADS = 16;
    private static final int PER_THREAD = 5000;

    @Test
    void concurrentPlansMintDistinctGlobalIds() throws Exception {
        try (WireMockRig rig = new WireMockRig()) {
            GenerateRequest request = GenerateRequest.newBuilder().setPrompt("p").build();
            Set<Long> seen = ConcurrentHashMap.newKeySet();
            CountDownLatch start = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    done.add(pool.submit(() -> {
                        start.await();
                        for (int i = 0; i < PER_THREAD; i++) {
                            ScheduleStyle style = i % 2 == 0 ? ScheduleStyle.CONTEXT_FIRST
                                    : ScheduleStyle.GENERATION_FIRST;
                            Handoff h = rig.connector.plan("r", style, request, rig.prefill, rig.decode);
                            long id = Long.parseLong(WireMockRig.id(h));
                            assertTrue(id >= 1L << 40, "below 2^40: " + id);
                            assertTrue(seen.add(id), "minted twice: " + id);
                        }
                        return null;
                    }));
                }
                start.countDown();
                for (Future<?> f : done) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
            assertEquals(THREADS * PER_THREAD, seen.size());
            assertEquals(0, rig.sent(), "plan() contacts no engine");
        }
    }

    @Test
    void replicasWithDistinctNodeIdsNeverCollideEvenWithTheSameSeed() {
        DisaggIds a = new DisaggIds(1, 42);
        DisaggIds b = new DisaggIds(2, 42);
        for (int i = 0; i < 1000; i++) {
            assertNotEquals(a.next(), b.next());
        }
    }

    @Test
    void theSequenceWrapsInsideTheGlobalSpace() {
        DisaggIds ids = new DisaggIds(255, -1L);
        long last = ids.next();
        long wrapped = ids.next();
        assertTrue(last > 0 && wrapped > 0 && wrapped >= 1L << 62 && last >= 1L << 62);
    }

    @Test
    void eachPlanCarriesItsIdAsANativeIdentity() {
        try (WireMockRig rig = new WireMockRig(Map.of("node-id", "7"))) {
            Handoff h = rig.connector.plan("r", ScheduleStyle.CONTEXT_FIRST,
                    GenerateRequest.newBuilder().setPrompt("p").build(), rig.prefill, rig.decode);
            long id = Long.parseLong(WireMockRig.id(h));
            assertEquals(7, (id >>> 54) & 0xff, "node id bits");
        }
    }
}
