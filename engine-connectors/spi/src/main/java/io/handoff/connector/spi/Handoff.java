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
 */
public record Handoff(
        String requestId,
        ScheduleStyle style,
        GenerateRequest request,
        Endpoint prefill,
        Endpoint decode,
        Map<String, String> nativeIds,
        Struct transferData) {

    public Handoff {
        nativeIds = Map.copyOf(nativeIds);
        transferData = transferData == null ? Struct.getDefaultInstance() : transferData;
    }

    public Handoff withTransferData(Struct data) {
        return new Handoff(requestId, style, request, prefill, decode, nativeIds, data);
    }

    public Handoff withDecode(Endpoint newDecode) {
        return new Handoff(requestId, style, request, prefill, newDecode, nativeIds, transferData);
    }
}
