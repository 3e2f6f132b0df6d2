package io.handoff.connector.spi;

import com.google.protobuf.Struct;
import io.handoff.openengine.v1.GenerateRequest;

import java.util.Map;

/**
 * One request's handoff as a connector planned it: the request, the style, the two endpoints and the native
 * identities minted for them (an SGLang room, a TensorRT-LLM disagg request id). After a context-first prefill it
 * also carries the engine's transfer data (vLLM's {@code kv_transfer_params}) for the decode leg. Immutable;
 * everything in it is plain data the gateway can store so that another replica can clean up.
 *
 * @param nativeIds    identities minted before either leg (stored on the session)
 * @param transferData what the producer returned for the consumer, verbatim; empty before the prefill
 * @param forward      headers the connector must send, verbatim, with the leg it is given this handoff for: as HTTP
 *                     headers to an HTTP engine, as gRPC metadata to a gRPC engine. The gateway sets them per leg
 *                     (the W3C {@code traceparent}/{@code tracestate} of that leg's span); names are lower-case
 *                     ASCII, valid both as HTTP header names and as gRPC ASCII metadata keys. Empty as planned.
 */
public record Handoff(
        String requestId,
        ScheduleStyle style,
        GenerateRequest request,
        Endpoint prefill,
        Endpoint decode,
        Map<String, String> nativeIds,
        Struct transferData,
        Map<String, String> forward) {

    public Handoff {
        nativeIds = Map.copyOf(nativeIds);
        transferData = transferData == null ? Struct.getDefaultInstance() : transferData;
        forward = forward == null ? Map.of() : Map.copyOf(forward);
    }

    /** A handoff as {@link EngineConnector#plan} returns it: nothing to forward until the gateway runs a leg. */
    public Handoff(String requestId, ScheduleStyle style, GenerateRequest request, Endpoint prefill, Endpoint decode,
            Map<String, String> nativeIds, Struct transferData) {
        this(requestId, style, request, prefill, decode, nativeIds, transferData, Map.of());
    }

    public Handoff withTransferData(Struct data) {
        return new Handoff(requestId, style, request, prefill, decode, nativeIds, data, forward);
    }

    public Handoff withDecode(Endpoint newDecode) {
        return new Handoff(requestId, style, request, prefill, newDecode, nativeIds, transferData, forward);
    }

    /** The same handoff with the headers the next leg must carry to its engine (replacing any earlier ones). */
    public Handoff withForward(Map<String, String> headers) {
        return new Handoff(requestId, style, request, prefill, decode, nativeIds, transferData, headers);
    }
}
