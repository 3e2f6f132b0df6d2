package io.handoff.gateway.api.rest;

import com.google.protobuf.Duration;
import io.handoff.gateway.api.openengine.KvSessionMessages;

/** {@code lease_ms} as the proto Duration the session service reads. */
final class RestLeases {

    private RestLeases() {
    }

    private static final long MAX_MILLIS = KvSessionMessages.MAX_DURATION_SECONDS * 1000;

    /**
     * Built by hand rather than with Durations.fromMillis, which throws on values past ten thousand years: those
     * must reach the session service and be refused there as above the maximum lease, like any other, so they are
     * held to the longest valid protobuf Duration (which no lease maximum comes near).
     */
    static Duration toProto(long millis) {
        long held = Math.max(-MAX_MILLIS, Math.min(MAX_MILLIS, millis));
        return Duration.newBuilder().setSeconds(held / 1000).setNanos((int) (held % 1000) * 1_000_000).build();
    }
}
