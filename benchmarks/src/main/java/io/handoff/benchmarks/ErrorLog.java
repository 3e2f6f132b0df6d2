package io.handoff.benchmarks;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** Errors of one phase: all counted, the first few kept verbatim (and printed as they happen). */
final class ErrorLog {

    private static final int KEPT = 20;

    private final String phase;
    private final AtomicLong count = new AtomicLong();
    private final List<String> kept = new ArrayList<>();

    ErrorLog(String phase) {
        this.phase = phase;
    }

    void add(String operation, Throwable failure) {
        long n = count.incrementAndGet();
        String message = operation + ": " + describe(failure);
        if (n <= KEPT) {
            synchronized (kept) {
                kept.add(message);
            }
            System.err.println("[" + phase + "] error " + n + ": " + message);
        }
    }

    String phase() {
        return phase;
    }

    long count() {
        return count.get();
    }

    List<String> kept() {
        synchronized (kept) {
            return List.copyOf(kept);
        }
    }

    private static String describe(Throwable failure) {
        Throwable t = failure;
        while (t.getCause() != null && !(t instanceof StatusRuntimeException)) {
            t = t.getCause();
        }
        if (t instanceof StatusRuntimeException sre) {
            Status s = sre.getStatus();
            return s.getCode() + (s.getDescription() == null ? "" : " " + s.getDescription());
        }
        return t.toString();
    }
}
