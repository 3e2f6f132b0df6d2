package io.handoff.gateway.orchestration;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.KvSessionRef;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The KvSessionRef Handoff gives a framework that drives the legs itself: our session id, and in
 * attributes_struct the engine's native handoff data verbatim under {@value #TRANSFER} next to what the gateway
 * needs to rebuild the handoff for the decode leg under {@value #HANDOFF} (route, endpoints, native ids, and the
 * session epoch the ref was issued at, so that a ref from before a later move of the session is refused).
 */
final class ParticipantRef {

    static final String HANDOFF = "handoff";
    static final String TRANSFER = "transfer";
    static final String TRANSFER_BACKEND = "handoff";

    private ParticipantRef() {
    }

    static KvSessionRef issue(String sessionId, long epoch, Route route, Handoff handoff) {
        Struct.Builder ours = Struct.newBuilder()
                .putFields("route", string(route.name()))
                .putFields("style", string(handoff.style().configName()))
                .putFields("prefill", string(handoff.prefill().name()))
                .putFields("decode", string(handoff.decode().name()))
                .putFields("epoch", string(Long.toString(epoch)));
        Struct.Builder ids = Struct.newBuilder();
        handoff.nativeIds().forEach((k, v) -> ids.putFields(k, string(v)));
        ours.putFields("native_ids", Value.newBuilder().setStructValue(ids).build());
        return KvSessionRef.newBuilder().setSessionId(sessionId).setTransferBackend(TRANSFER_BACKEND)
                .setAttributesStruct(Struct.newBuilder()
                        .putFields(HANDOFF, Value.newBuilder().setStructValue(ours).build())
                        .putFields(TRANSFER, Value.newBuilder().setStructValue(handoff.transferData()).build()))
                .build();
    }

    /** What a decode leg's ref says, checked for shape only; the session itself is checked by the caller. */
    record Presented(String sessionId, String route, long epoch, String prefill, String decode,
            Map<String, String> nativeIds, Struct transfer) {

        /** The handoff the decode leg runs, on the decode endpoint the ref names (or the one given). */
        Handoff handoff(String requestId, GenerateRequest request, Route route, PooledEndpoint decodeSlot) {
            Endpoint prefillEndpoint = route.prefill().member(prefill).map(PooledEndpoint::endpoint)
                    .orElseThrow(() -> GenerateRefusal.invalid("kv.session names prefill endpoint '" + prefill
                            + "', which route " + route.name() + " does not have"));
            return new Handoff(requestId, ScheduleStyle.CONTEXT_FIRST, request, prefillEndpoint,
                    decodeSlot.endpoint(), nativeIds, transfer);
        }
    }

    static Presented read(KvSessionRef ref) {
        Struct attributes = ref.getAttributesStruct();
        Value ours = attributes.getFieldsMap().get(HANDOFF);
        Value transfer = attributes.getFieldsMap().get(TRANSFER);
        if (ref.getSessionId().isEmpty() || ours == null || !ours.hasStructValue() || transfer == null
                || !transfer.hasStructValue()) {
            throw GenerateRefusal.invalid("kv.session is not a ref Handoff issued: it needs session_id and the "
                    + "attributes_struct of the PrefillReady it came from, unchanged");
        }
        Map<String, Value> fields = ours.getStructValue().getFieldsMap();
        Map<String, String> ids = new HashMap<>();
        Optional.ofNullable(fields.get("native_ids")).filter(Value::hasStructValue)
                .ifPresent(v -> v.getStructValue().getFieldsMap().forEach((k, id) -> ids.put(k, id.getStringValue())));
        long epoch;
        try {
            epoch = Long.parseLong(text(fields, "epoch"));
        } catch (NumberFormatException e) {
            throw GenerateRefusal.invalid("kv.session attributes carry no valid handoff.epoch");
        }
        return new Presented(ref.getSessionId(), text(fields, "route"), epoch, text(fields, "prefill"),
                text(fields, "decode"), ids, transfer.getStructValue());
    }

    private static String text(Map<String, Value> fields, String name) {
        Value v = fields.get(name);
        return v == null ? "" : v.getStringValue();
    }

    private static Value string(String s) {
        return Value.newBuilder().setStringValue(s).build();
    }
}
