package io.handoff.connector.openai.family;

import java.time.Instant;
import java.time.LocalDate;

/**
 * Instants a connector writes into a handoff's transfer data (a decode deadline, the end of a hold) and reads back
 * on the decode leg, once per request. They are written as {@link Instant#toString()} writes them (ISO-8601 in UTC),
 * and written and read back here without java.time's general formatter and parser: that parser resolved a handful
 * of fields through a map and cost more than the rest of the leg's bookkeeping, and the formatter nearly as much.
 * Text in any other ISO-8601 form is read by {@link Instant#parse}, so nothing is read differently.
 */
public final class TransferInstants {

    /** First second of year 10000: from there on (and before 1970) {@link Instant#toString()} writes it. */
    private static final long YEAR_10000 = 253_402_300_800L;

    private TransferInstants() {
    }

    /**
     * The text {@link Instant#toString()} writes, without java.time's formatter (it cost as much as the reading did)
     * for the instants a request writes: from 1970 to the end of year 9999.
     */
    public static String write(Instant instant) {
        long second = instant.getEpochSecond();
        if (second < 0 || second >= YEAR_10000) {
            return instant.toString();
        }
        LocalDate date = LocalDate.ofEpochDay(second / 86_400);
        int secondOfDay = (int) (second % 86_400);
        int nanos = instant.getNano();
        // as toString: no fraction, or the fraction in groups of three digits, as many groups as it needs
        int fractionDigits = nanos == 0 ? 0 : nanos % 1_000_000 == 0 ? 3 : nanos % 1000 == 0 ? 6 : 9;
        char[] text = new char[20 + (fractionDigits == 0 ? 0 : fractionDigits + 1)];
        put(text, 0, date.getYear(), 4);
        text[4] = '-';
        put(text, 5, date.getMonthValue(), 2);
        text[7] = '-';
        put(text, 8, date.getDayOfMonth(), 2);
        text[10] = 'T';
        put(text, 11, secondOfDay / 3600, 2);
        text[13] = ':';
        put(text, 14, secondOfDay / 60 % 60, 2);
        text[16] = ':';
        put(text, 17, secondOfDay % 60, 2);
        if (fractionDigits > 0) {
            text[19] = '.';
            put(text, 20, fractionDigits == 3 ? nanos / 1_000_000 : fractionDigits == 6 ? nanos / 1000 : nanos,
                    fractionDigits);
        }
        text[text.length - 1] = 'Z';
        return new String(text);
    }

    /** {@code value} as {@code width} decimal digits, zero-padded, at {@code text[at]}. */
    private static void put(char[] text, int at, int value, int width) {
        for (int i = at + width - 1; i >= at; i--) {
            text[i] = (char) ('0' + value % 10);
            value /= 10;
        }
    }

    /**
     * The instant of {@code text}, as {@link Instant#parse} reads it.
     *
     * @throws java.time.format.DateTimeParseException for text that is no ISO-8601 instant
     */
    public static Instant read(String text) {
        Instant fast = readWritten(text);
        return fast != null ? fast : Instant.parse(text);
    }

    /** {@code yyyy-MM-ddTHH:mm:ss[.f{1,9}]Z}, the form {@link Instant#toString()} takes; null for any other. */
    private static Instant readWritten(String t) {
        int n = t.length();
        if (n < 20 || t.charAt(4) != '-' || t.charAt(7) != '-' || t.charAt(10) != 'T' || t.charAt(13) != ':'
                || t.charAt(16) != ':' || t.charAt(n - 1) != 'Z') {
            return null;
        }
        int year = digits(t, 0, 4);
        int month = digits(t, 5, 7);
        int day = digits(t, 8, 10);
        int hour = digits(t, 11, 13);
        int minute = digits(t, 14, 16);
        int second = digits(t, 17, 19);
        if ((year | month | day | hour | minute | second) < 0 || month < 1 || month > 12 || day < 1
                || hour > 23 || minute > 59 || second > 59 || day > LocalDate.of(year, month, 1).lengthOfMonth()) {
            return null;
        }
        int nanos = 0;
        if (n > 20) {
            int fraction = n - 21;
            if (t.charAt(19) != '.' || fraction < 1 || fraction > 9) {
                return null;
            }
            nanos = digits(t, 20, n - 1);
            if (nanos < 0) {
                return null;
            }
            for (int i = fraction; i < 9; i++) {
                nanos *= 10;
            }
        }
        long days = LocalDate.of(year, month, day).toEpochDay();
        return Instant.ofEpochSecond(days * 86_400 + hour * 3_600L + minute * 60L + second, nanos);
    }

    /** The decimal value of {@code t[from, to)}, or -1 if a character there is no digit. */
    private static int digits(String t, int from, int to) {
        int value = 0;
        for (int i = from; i < to; i++) {
            char c = t.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }
}
