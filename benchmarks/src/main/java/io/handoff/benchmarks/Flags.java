package io.handoff.benchmarks;

import java.time.Duration;
import java.util.Map;

/**
 * A driver's command line, one flag at a time: {@code --name value} or {@code --name=value}, and {@code -h} or
 * {@code --help} for the usage. Each driver reads the flags in a switch of its own; the checks of their values are
 * here so that both drivers word them alike.
 */
final class Flags {

    private final String[] args;
    private final String usage;
    private int at;
    private String name;
    private String value;

    Flags(String[] args, String usage) {
        this.args = args;
        this.usage = usage;
    }

    /** Moves to the next flag; false after the last one. */
    boolean next() {
        if (at >= args.length) {
            return false;
        }
        String a = args[at++];
        if (a.equals("-h") || a.equals("--help")) {
            throw new IllegalArgumentException(usage);
        }
        int eq = a.indexOf('=');
        if (a.startsWith("--") && eq > 0) {
            value = a.substring(eq + 1);
            a = a.substring(0, eq);
        } else {
            if (at >= args.length) {
                throw new IllegalArgumentException("missing value for " + a + "\n" + usage);
            }
            value = args[at++];
        }
        name = a;
        return true;
    }

    String name() {
        return name;
    }

    String value() {
        return value;
    }

    /** The failure for a flag the driver does not know. */
    IllegalArgumentException unknown() {
        return new IllegalArgumentException("unknown option " + name + "\n" + usage);
    }

    static double positive(String option, double value) {
        if (!(value > 0)) {
            throw new IllegalArgumentException(option + " must be positive");
        }
        return value;
    }

    static double nonNegative(String option, double value) {
        if (value < 0) {
            throw new IllegalArgumentException(option + " must not be negative");
        }
        return value;
    }

    /** Adds a {@code --watch NAME=PID} to the processes whose CPU use is reported. */
    static void addWatch(Map<String, Long> watch, String value) {
        int at = value.indexOf('=');
        if (at <= 0) {
            throw new IllegalArgumentException("--watch takes NAME=PID, was " + value);
        }
        watch.put(value.substring(0, at), Long.parseLong(value.substring(at + 1)));
    }

    static Duration secondsOf(double seconds) {
        return Duration.ofNanos((long) (seconds * 1e9));
    }
}
