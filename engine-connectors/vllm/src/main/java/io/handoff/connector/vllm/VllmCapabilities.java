package io.handoff.connector.vllm;

import io.handoff.connector.spi.AbortMode;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.InputKind;
import io.handoff.connector.spi.ScheduleStyle;

import java.util.Set;

/** What vLLM's NixlConnector (pull) does natively, for a route's settings. */
final class VllmCapabilities {

    private VllmCapabilities() {
    }

    static ConnectorCapabilities of(VllmSettings settings) {
        return new ConnectorCapabilities(
                // the producer must answer with kv_transfer_params before the consumer can be sent anything
                Set.of(ScheduleStyle.CONTEXT_FIRST),
                settings.hold(),
                // only lease builds: the consumer heartbeats the producer from the moment it has the request
                settings.holdMode() == HoldMode.LEASE,
                // no HTTP call frees parked KV; it goes when a consumer reads it or the producer's timer ends
                false,
                // no public abort endpoint in stock vLLM; a closed connection aborts
                AbortMode.CLOSE_CONNECTION,
                true,
                // a chat goes to /v1/chat/completions on both legs; vLLM applies its chat template
                Set.of(InputKind.TEXT, InputKind.TOKEN_IDS, InputKind.CHAT_MESSAGES),
                VllmFields.CARRIED,
                // the parameters name the producer, not the consumer: any consumer that can reach the producer's
                // side channel can pull, provided the first one never received them
                true,
                1);
    }
}
