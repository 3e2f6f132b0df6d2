package io.handoff.chaos;

import java.util.ArrayList;
import java.util.List;

/** The figures of a run: each invariant with what it must be and what it was, then figures that only inform. */
final class Verdict {

    record Row(String name, String expected, long actual, boolean invariant, boolean holds) {
    }

    private final List<Row> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    /** An invariant: it must be exactly {@code expected}. */
    void must(String name, long expected, long actual) {
        rows.add(new Row(name, Long.toString(expected), actual, true, expected == actual));
    }

    /** An invariant that is a lower bound: a fault that must have run, work that must have met it. */
    void mustAtLeast(String name, long least, long actual) {
        rows.add(new Row(name, ">= " + least, actual, true, actual >= least));
    }

    void figure(String name, long actual) {
        rows.add(new Row(name, "", actual, false, true));
    }

    void note(String line) {
        notes.add(line);
    }

    boolean holds() {
        return rows.stream().allMatch(Row::holds);
    }

    List<Row> rows() {
        return rows;
    }

    List<String> notes() {
        return notes;
    }

    List<String> broken() {
        return rows.stream().filter(r -> !r.holds()).map(r -> r.name() + ": expected " + r.expected() + ", was "
                + r.actual()).toList();
    }

    String table() {
        int width = rows.stream().mapToInt(r -> r.name().length()).max().orElse(10);
        StringBuilder b = new StringBuilder();
        String format = "| %-" + width + "s | %8s | %10s | %-6s |%n";
        b.append(String.format(format, "figure", "must be", "measured", ""));
        b.append(String.format(format, "-".repeat(width), "--------", "----------", "------"));
        for (Row r : rows) {
            b.append(String.format(format, r.name(), r.expected(), r.actual(),
                    r.invariant() ? (r.holds() ? "ok" : "BROKEN") : ""));
        }
        notes.forEach(n -> b.append(n).append(System.lineSeparator()));
        return b.toString();
    }
}
