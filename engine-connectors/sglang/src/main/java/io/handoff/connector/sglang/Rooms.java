package io.handoff.connector.sglang;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Mints SGLang bootstrap rooms and rids. A room is a random integer in [1, 2^63-1] (0 is what SGLang's own health
 * check uses), drawn from a {@link SecureRandom} and reserved in an in-process set for as long as one of its legs may
 * be in flight: a room already reserved is drawn again, so this process never has two live handoffs on one room
 * (a duplicate in-flight room crashes both SGLang schedulers, sglang#40125). Across gateway replicas uniqueness is
 * probabilistic: two live random 63-bit rooms collide with probability about live^2 / 2^64.
 *
 * <p>A reservation ends when both legs have ended, when the handoff's holds are discharged, or, for a plan whose legs
 * never ran, after the retention.
 */
final class Rooms {

    private static final int PREFILL_BIT = 1;
    private static final int DECODE_BIT = 2;

    private final ConcurrentHashMap<Long, Reservation> live = new ConcurrentHashMap<>();
    private final LongSupplier random;
    private final SecureRandom ridRandom = new SecureRandom();
    private final Clock clock;
    private final Duration retention;
    private volatile Instant lastSweep;

    private record Reservation(Instant at, AtomicInteger ended) {
    }

    Rooms(LongSupplier random, Clock clock, Duration retention) {
        this.random = random;
        this.clock = clock;
        this.retention = retention;
        this.lastSweep = clock.instant();
    }

    static Rooms secure(Clock clock, Duration retention) {
        SecureRandom r = new SecureRandom();
        return new Rooms(r::nextLong, clock, retention);
    }

    /** A room no live handoff of this process uses, reserved until {@link #legEnded} or {@link #release}. */
    long mint() {
        sweep();
        Instant now = clock.instant();
        while (true) {
            long room = random.getAsLong() & Long.MAX_VALUE;
            if (room != 0 && live.putIfAbsent(room, new Reservation(now, new AtomicInteger())) == null) {
                return room;
            }
        }
    }

    /** A fixed-length random rid stem (128 bits, 32 hex digits). */
    String ridStem() {
        byte[] b = new byte[16];
        ridRandom.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    void legEnded(long room, boolean prefill) {
        Reservation r = live.get(room);
        if (r != null && r.ended().accumulateAndGet(prefill ? PREFILL_BIT : DECODE_BIT, (a, b) -> a | b)
                == (PREFILL_BIT | DECODE_BIT)) {
            live.remove(room, r);
        }
    }

    void release(long room) {
        live.remove(room);
    }

    boolean isLive(long room) {
        return live.containsKey(room);
    }

    int liveCount() {
        return live.size();
    }

    private void sweep() {
        Instant now = clock.instant();
        if (Duration.between(lastSweep, now).compareTo(retention.dividedBy(10)) < 0) {
            return;
        }
        lastSweep = now;
        Instant oldest = now.minus(retention);
        live.entrySet().removeIf(e -> e.getValue().at().isBefore(oldest));
    }
}
