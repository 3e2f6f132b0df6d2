package io.handoff.connector.sglang;

import io.handoff.connector.spi.AbortMode;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.InputKind;
import io.handoff.connector.spi.ScheduleStyle;

import java.util.Set;

/** What SGLang's PD disaggregation does natively, for a route's settings. */
final class SglangCapabilities {

    private SglangCapabilities() {
    }

    static ConnectorCapabilities of(SglangSettings settings) {
        return new ConnectorCapabilities(
                // both legs carry the same room; the prefill blocks in its bootstrap queue until the decode
                // connects, so the decode goes first or alongside. Prefill-first-and-wait deadlocks: no context-first
                Set.of(ScheduleStyle.CONCURRENT, ScheduleStyle.GENERATION_FIRST),
                // SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT (prefill) / _WAITING_TIMEOUT (decode), whichever is longer
                settings.hold(),
                // a queued decode does not extend the prefill's bootstrap timer
                false,
                // /abort_request on both rids frees both engines' KV
                true,
                AbortMode.ABORT_ENDPOINT,
                // a PD-mode SGLang server answers 400 to a request without a bootstrap room: no local prefill
                false,
                // a chat goes to /v1/chat/completions on both legs; SGLang applies its chat template
                Set.of(InputKind.TEXT, InputKind.TOKEN_IDS, InputKind.CHAT_MESSAGES),
                SglangFields.CARRIED,
                // the room pairs with whichever decode reaches the producer's bootstrap server first, so a decode
                // that never reached its endpoint may go to another one with the same bootstrap fields
                true,
                // n > 1 would share one room (see SglangFields)
                1);
    }
}
