package io.handoff.gateway.session.store;

import java.time.Instant;

/**
 * The generic cell rate algorithm, for one limit: the state is one number, the theoretical arrival time (TAT, in
 * microseconds since the epoch) at which the limit is empty again. A charge of {@code n} units moves it by
 * {@code n} emission intervals; it fits while the TAT stays within {@code burst} intervals of now. A charge larger
 * than the burst fits only when the limit is empty (it would never fit otherwise) and leaves the debt for later
 * requests to wait out. {@code rate_limit.lua} is the same arithmetic for the Redis store; keep the two together.
 */
final class Gcra {

    private Gcra() {
    }

    /** Microseconds since the epoch: the unit of every time the algorithm keeps. */
    static long micros(Instant instant) {
        return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1000);
    }

    /** The TAT after {@code charge}, from a stored TAT ({@code 0} when none) at {@code now}; never before now. */
    static double charged(double storedTat, long now, RateCharge charge) {
        double tat = Math.max(storedTat, now) + charge.cost() * charge.limit().intervalMicros();
        return Math.max(tat, now);
    }

    /** How long to wait (µs) until a TAT of {@code tat} after a charge of {@code cost} fits; 0 when it fits now. */
    static long waitMicros(double tat, long now, RateCharge charge) {
        double allowance = Math.max(charge.limit().burst(), charge.cost()) * charge.limit().intervalMicros();
        double over = tat - now - allowance;
        return over > 0 ? (long) Math.ceil(over) : 0;
    }
}
