package io.handoff.gateway.api.edge;

import java.util.List;
import java.util.Random;

/** The fuzzer's one source of chance: every choice for an input comes from its own seeded generator. */
final class Dice {

    /** Characters strings are made of: ASCII, controls, quotes and escapes, accents, CJK, an emoji, a BOM, a zero-width space. */
    private static final String ALPHABET = "abcXYZ019 _-./:%?#&=+\"\\'\t\n\r\u0000\u0001\u001f\u007f"
            + "\u00e9\u00df\u4e2d\u6587\uFEFF\u200b\u2603";

    private final Random random;

    /** The dice of input {@code index} of the run {@code seed}: independent of every other input's. */
    Dice(long seed, int index) {
        this.random = new Random(mix(mix(seed) + index));
    }

    /** MurmurHash3's finalizer: neighbouring seeds of java.util.Random start alike, mixed ones do not. */
    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }

    int between(int fromInclusive, int toInclusive) {
        return fromInclusive + random.nextInt(toInclusive - fromInclusive + 1);
    }

    boolean chance(double p) {
        return random.nextDouble() < p;
    }

    <T> T pick(List<T> options) {
        return options.get(random.nextInt(options.size()));
    }

    @SafeVarargs
    final <T> T pick(T... options) {
        return options[random.nextInt(options.length)];
    }

    byte[] bytes(int length) {
        byte[] b = new byte[length];
        random.nextBytes(b);
        return b;
    }

    /** A string of {@code length} characters of {@link #ALPHABET} . */
    String text(int length) {
        StringBuilder s = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            s.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
        }
        return s.toString();
    }

    /** A long string quickly: one random run repeated. */
    String huge(int length) {
        String run = text(64);
        return run.repeat(length / run.length() + 1).substring(0, length);
    }

    String hex(int length) {
        StringBuilder s = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            s.append(Character.forDigit(random.nextInt(16), 16));
        }
        return s.toString();
    }
}
