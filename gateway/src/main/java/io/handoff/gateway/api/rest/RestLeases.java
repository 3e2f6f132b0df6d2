package io.handoff.gateway.api.rest;

import com.google.protobuf.Duration;

/** {@code lease_ms} as the proto Duration the session service reads. */
final class RestLeases {

    private RestLeases() {
    }

    /**
     * Built by hand rather than with Durations.fromMillis, which throws on values past ten thousand years: those
     * must reach the session service and be refused there as above the maximum lease, like any other.
     */
    static Duration toProto(long millis) {
        return Duration.newBuilder().setSeconds(millis / 1000).setNanos((int) (millis % 1000) * 1_000_000).build();
    }
}
