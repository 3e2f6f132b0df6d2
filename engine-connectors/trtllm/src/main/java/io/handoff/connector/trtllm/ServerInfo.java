package io.handoff.connector.trtllm;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * What a context worker's {@code GET /server_info} says a generation-first generation needs:
 * {@code disaggregated_params.ctx_info_endpoint} (a list: its first element is used) and {@code ctx_dp_rank}.
 */
record ServerInfo(String infoEndpoint, int dpRank) {

    /** Null when the answer names no transceiver endpoint (the worker has no generation-first transceiver). */
    static ServerInfo parse(JsonNode answer) {
        JsonNode dp = answer.path("disaggregated_params");
        JsonNode ep = dp.path("ctx_info_endpoint");
        if (ep.isArray()) {
            ep = ep.path(0);
        }
        if (!ep.isTextual() || ep.asText().isBlank()) {
            return null;
        }
        return new ServerInfo(ep.asText(), dp.path("ctx_dp_rank").asInt(0));
    }
}
