package io.handoff.connector.openai.family;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TransferInstantsTest {

    /** An instant in [from, to) seconds whose fraction is, by turns, none, millis, micros and nanos. */
    private static Instant instant(SplittableRandom random, int i, long from, long to) {
        int nanos = switch (i % 4) {
            case 0 -> 0;
            case 1 -> random.nextInt(1000) * 1_000_000;
            case 2 -> random.nextInt(1_000_000) * 1000;
            default -> random.nextInt(1_000_000_000);
        };
        return Instant.ofEpochSecond(random.nextLong(from, to), nanos);
    }

    @Test
    void readsBackWhatItWroteForInstantsOfEveryPrecision() {
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < 20_000; i++) {
            Instant instant = instant(random, i, 0, 253_402_300_799L); // up to 9999-12-31T23:59:59Z
            assertEquals(instant, TransferInstants.read(TransferInstants.write(instant)), instant.toString());
        }
    }

    @Test
    void writesWhatInstantToStringWrites() {
        SplittableRandom random = new SplittableRandom(7);
        List<Instant> edges = List.of(Instant.EPOCH, Instant.ofEpochSecond(0, 1), Instant.ofEpochSecond(-1),
                Instant.ofEpochSecond(-1, 999_999_999), Instant.parse("9999-12-31T23:59:59.999999999Z"),
                Instant.parse("+10000-01-01T00:00:00Z"), Instant.parse("2024-02-29T23:59:59.100Z"),
                Instant.parse("2026-12-03T18:00:00.000010Z"), Instant.parse("2000-01-01T00:00:00.000000001Z"),
                Instant.MIN, Instant.MAX);
        for (Instant instant : edges) {
            assertEquals(instant.toString(), TransferInstants.write(instant));
        }
        for (int i = 0; i < 50_000; i++) {
            Instant instant = instant(random, i, -100_000_000_000L, 300_000_000_000L);
            assertEquals(instant.toString(), TransferInstants.write(instant));
        }
    }

    @Test
    void readsOtherIsoFormsAsInstantParseDoes() {
        for (String text : List.of("2026-12-03T18:00:00.5Z", "2026-12-03T18:00:00.1234Z", "+10000-01-01T00:00:00Z",
                "-0001-01-01T00:00:00Z", "2024-02-29T23:59:59.999999999Z", "1969-12-31T23:59:59.999Z",
                "2026-12-03T24:00:00Z", "2026-12-31T23:59:60Z",
                "2026-12-03T18:00:00.Z")) {
            assertEquals(Instant.parse(text), TransferInstants.read(text), text);
        }
    }

    @Test
    void refusesWhatInstantParseRefuses() {
        for (String text : List.of("2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
                "2026-12-03T18:00:00.1234567890Z", "2026-12-03 18:00:00Z",
                "2026-12-03T18:00:00", "x026-12-03T18:00:00Z", "")) {
            assertThrows(DateTimeParseException.class, () -> TransferInstants.read(text), text);
        }
    }
}
