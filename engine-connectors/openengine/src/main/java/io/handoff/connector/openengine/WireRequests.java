package io.handoff.connector.openengine;

import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvSessionRef;

/**
 * The requests the engines receive: the client's request unchanged (same schema), with the leg's request id, the
 * route's model when the client named none, and the gateway-owned kv fields replaced: no client kv.session (plan
 * refused it), no Handoff additions (an upstream engine does not know them), and on a decode the producer's ref.
 */
final class WireRequests {
    private WireRequests() {
    }

    static GenerateRequest prefill(GenerateRequest client, String requestId, String routeModel) {
        return base(client, requestId, routeModel).build();
    }

    static GenerateRequest decode(GenerateRequest client, String requestId, String routeModel, KvSessionRef ref) {
        GenerateRequest.Builder b = base(client, requestId, routeModel);
        return b.setKv(b.getKv().toBuilder().setSession(ref)).build();
    }

    static GenerateRequest local(GenerateRequest client, String requestId, String routeModel) {
        return base(client, requestId, routeModel).build();
    }

    private static GenerateRequest.Builder base(GenerateRequest client, String requestId, String routeModel) {
        GenerateRequest.Builder b = client.toBuilder().setRequestId(requestId);
        if (b.getModel().isEmpty() && routeModel != null) {
            b.setModel(routeModel);
        }
        if (b.hasKv()) {
            KvOptions kv = b.getKv().toBuilder().clearSession().clearTransferDisposition().clearScheduleStyle().build();
            if (kv.equals(KvOptions.getDefaultInstance())) {
                b.clearKv();
            } else {
                b.setKv(kv);
            }
        }
        return b;
    }
}
