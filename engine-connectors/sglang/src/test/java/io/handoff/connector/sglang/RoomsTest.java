package io.handoff.connector.sglang;

import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.connector.testsupport.ManualClock;
import io.handoff.openengine.v1.GenerateRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A duplicate in-flight room crashes SGLang: rooms are unique among live handoffs, and rids never prefix each other. */
class RoomsTest {

    private static final GenerateRequest REQUEST = GenerateRequest.newBuilder().setPrompt("p").build();
    private WireMockRig rig;

    @BeforeEach
    void start() {
        rig = WireMockRig.standard();
    }

    @AfterEach
    void stop() {
        rig.close();
    }

    @Test
    void manyPlansGetDistinctRoomsAndRidsInRange() {
        Set<Long> rooms = new HashSet<>();
        Set<String> rids = new HashSet<>();
        for (int i = 0; i < 100_000; i++) {
            SglangIds ids = SglangIds.of(rig.connector.plan("r" + i, ScheduleStyle.CONCURRENT, REQUEST, rig.prefill,
                    rig.decode));
            assertTrue(ids.room() >= 1, "room in [1, 2^63-1]");
            assertTrue(rooms.add(ids.room()), "duplicate room " + ids.room());
            assertTrue(rids.add(ids.prefillRid()) && rids.add(ids.decodeRid()));
            assertTrue(ids.prefillRid().matches("[0-9a-f]{32}-p") && ids.decodeRid().matches("[0-9a-f]{32}-d"));
        }
    }

    @Test
    void concurrentPlansGetDistinctRooms() throws Exception {
        Set<Long> rooms = ConcurrentHashMap.newKeySet();
        AtomicLong duplicates = new AtomicLong();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 10_000; i++) {
                    Handoff h = rig.connector.plan("r", ScheduleStyle.GENERATION_FIRST, REQUEST, rig.prefill,
                            rig.decode);
                    if (!rooms.add(SglangIds.of(h).room())) {
                        duplicates.incrementAndGet();
                    }
                }
            });
            th.start();
            threads.add(th);
        }
        go.countDown();
        for (Thread th : threads) {
            th.join();
        }
        assertEquals(0, duplicates.get());
        assertEquals(80_000, rooms.size());
    }

    @Test
    void aRandomSourceThatRepeatsItselfStillYieldsUniqueLiveRooms() {
        // a source stuck on few values (and on 0 and negatives): live rooms are never handed out twice
        long[] values = {0, 5, 5, 5, 7, Long.MIN_VALUE, 7, 9};
        AtomicLong next = new AtomicLong();
        ManualClock clock = new ManualClock(WireMockRig.START);
        Rooms rooms = new Rooms(() -> values[(int) (next.getAndIncrement() % values.length)], clock,
                Duration.ofHours(1));
        assertEquals(5, rooms.mint());
        assertEquals(7, rooms.mint(), "a live room is drawn again");
        assertEquals(9, rooms.mint(), "Long.MIN_VALUE masks to 0, which is never a room");
        rooms.legEnded(5, true);
        assertTrue(rooms.isLive(5), "one leg ended: the room is still live");
        rooms.legEnded(5, true);
        assertTrue(rooms.isLive(5), "the same leg twice does not end the other");
        rooms.legEnded(5, false);
        assertFalse(rooms.isLive(5));
    }

    @Test
    void reservationsOfPlansWhoseLegsNeverRanExpire() {
        ManualClock clock = new ManualClock(WireMockRig.START);
        AtomicLong n = new AtomicLong(100);
        Rooms rooms = new Rooms(n::incrementAndGet, clock, Duration.ofMinutes(10));
        long r = rooms.mint();
        clock.advance(Duration.ofMinutes(11));
        rooms.mint();
        assertFalse(rooms.isLive(r));
        assertEquals(1, rooms.liveCount());
    }
}
