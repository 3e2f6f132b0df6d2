package io.handoff.simulator.openengine;

import io.grpc.Status;

/** Turns the shared {@code error_status} fault (an HTTP status) into the gRPC status an engine would answer. */
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
