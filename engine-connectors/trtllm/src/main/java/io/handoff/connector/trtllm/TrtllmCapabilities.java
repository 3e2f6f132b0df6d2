package io.handoff.connector.trtllm;

import io.handoff.connector.spi.AbortMode;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.InputKind;

import java.util.Set;

/** What trtllm-serve's disaggregation does natively, for a route's settings. */
final class TrtllmCapabilities {

    private TrtllmCapabilities() {
    }

    static ConnectorCapabilities of(TrtllmSettings settings) {
        return new ConnectorCapabilities(
                settings.styles(),
                // kv_transfer_timeout_ms: the context's timer starts when its prefill finished and the send began
                settings.hold(),
                // the context's deadline is absolute; a generation that reached the worker does not extend it
                false,
                // no HTTP call frees a parked context: it goes when a generation pulls it or the timer ends
                false,
                // no abort endpoint: a closed connection aborts (polled every second by the worker)
                AbortMode.CLOSE_CONNECTION,
                // an aggregated request (no disaggregated_params, i.e. context_and_generation) on a generation worker
                true,
                // a chat goes to /v1/chat/completions on every leg; the workers apply their chat template
                Set.of(InputKind.TEXT, InputKind.TOKEN_IDS, InputKind.CHAT_MESSAGES),
                TrtllmFields.CARRIED,
                // only for a generation that never reached its endpoint, and always with the same disagg_request_id
                // (never re-minted): no worker accepted the first attempt, so nothing is orphaned
                true,
                // the context answer must have exactly one choice
                1);
    }
}
