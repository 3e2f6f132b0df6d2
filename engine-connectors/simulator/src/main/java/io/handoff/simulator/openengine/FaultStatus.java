package io.handoff.simulator.openengine;

import io.grpc.Status;

/**
 * Turns the shared {@code error_status} fault (an HTTP status) into the gRPC status an engine would answer; 499 (a
 * request closed without an answer) is CANCELLED, as an engine answers the calls it drops while shutting down.
 */
final class FaultStatus {
    private FaultStatus() {
    }

    static Status fromHttp(int httpStatus) {
        switch (httpStatus) {
            case 400:
                return Status.INVALID_ARGUMENT;
            case 404:
                return Status.NOT_FOUND;
            case 409:
                return Status.ALREADY_EXISTS;
            case 429:
                return Status.RESOURCE_EXHAUSTED;
            case 499:
                return Status.CANCELLED;
            case 501:
                return Status.UNIMPLEMENTED;
            case 503:
                return Status.UNAVAILABLE;
            case 504:
                return Status.DEADLINE_EXCEEDED;
            default:
                return Status.INTERNAL;
        }
    }
}
