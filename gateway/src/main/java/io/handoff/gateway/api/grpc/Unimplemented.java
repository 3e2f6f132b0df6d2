package io.handoff.gateway.api.grpc;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/** The answer of an upstream RPC this gateway does not serve (yet): UNIMPLEMENTED, saying which and why. */
final class Unimplemented {

    private Unimplemented() {
    }

    static StatusRuntimeException rpc(String rpc, String why) {
        return Status.UNIMPLEMENTED.withDescription("openengine.v1." + rpc + " is not implemented by Handoff: " + why)
                .asRuntimeException();
    }
}
