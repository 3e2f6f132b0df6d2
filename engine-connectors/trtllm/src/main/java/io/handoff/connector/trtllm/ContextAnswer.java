package io.handoff.connector.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.connector.openai.completion.CompletionStreams;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.ErrorCode;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Reads a context worker's non-streaming answer to a context leg, as trtllm-serve's own orchestrator checks it:
 * exactly one choice, {@code choices[0].disaggregated_params} with {@code ctx_request_id} and
 * {@code disagg_request_id} (ours); the top-level {@code prompt_token_ids} for the generation's prompt.
 *
 * <ul>
 * <li>Context-first, {@code finish_reason} {@code length} or {@code not_finished}: Ready, the parked context held
 * until its {@code kv_transfer_timeout_ms} ends.</li>
 * <li>Context-first, any other finish (EOS or a stop on the first token): the answer is final; Finished without a
 * generation leg. The context is still reported as held: there is no release call, and a worker may keep the KV
 * until the timer ends.</li>
 * <li>Generation-first: the context pushed its KV to the generation that was already waiting, so nothing stays
 * parked; always Ready (the generation, already running, gives the answer).</li>
 * </ul>
 */
final class ContextAnswer {

    static final String HELD_RESOURCE = "parked-context-kv";

    private ContextAnswer() {
    }

    static HeldKv held(Handoff handoff, Instant until) {
        String id = handoff.nativeIds().get(TrtllmEngineConnector.DISAGG_REQUEST_ID);
        return new HeldKv("context@" + handoff.prefill().name(), handoff.prefill(), HELD_RESOURCE,
                Map.of("disagg_request_id", id, "ctx_request_id", id, "schedule_style",
                        handoff.style().configName()),
                until, false, true); // the context frees its KV once the generation has transferred it
    }

    static PrefillResult read(JsonNode answer, Handoff handoff, TrtllmSettings settings, Instant sentAt,
            Instant answeredAt) {
        boolean contextFirst = handoff.style() == ScheduleStyle.CONTEXT_FIRST;
        // capacity accounting needs the latest possible end, the decode guard the earliest
        Instant heldUntil = answeredAt.plus(settings.hold());
        List<HeldKv> held = contextFirst ? List.of(held(handoff, heldUntil)) : List.of();
        JsonNode choices = answer.path("choices");
        if (!choices.isArray() || choices.size() != 1) {
            throw failed(handoff, "the context answer has " + (choices.isArray() ? choices.size() : 0)
                    + " choices, not exactly one", held);
        }
        JsonNode choice = choices.get(0);
        String finish = choice.path("finish_reason").asText("");
        boolean needGeneration = finish.equals("length") || finish.equals("not_finished");
        if (contextFirst && !needGeneration) {
            ObjectNode copy = answer.deepCopy();
            ((ObjectNode) copy.path("choices").get(0)).remove("disaggregated_params");
            copy.remove("prompt_token_ids");
            return new PrefillResult.Finished(CompletionStreams.events(copy, handoff.requestId()), held);
        }
        JsonNode dp = choice.get("disaggregated_params");
        if (dp == null || !dp.isObject()) {
            throw failed(handoff, "the context answer carries no disaggregated_params (finish_reason=" + finish
                    + "); is the worker a trtllm-serve context server with a cache transceiver?", held);
        }
        String expected = handoff.nativeIds().get(TrtllmEngineConnector.DISAGG_REQUEST_ID);
        for (String key : new String[] {"ctx_request_id", "disagg_request_id"}) {
            if (!dp.path(key).isIntegralNumber()) {
                throw failed(handoff, "the context answer's disaggregated_params lack " + key, held);
            }
        }
        if (!dp.get("disagg_request_id").bigIntegerValue().toString().equals(expected)) {
            throw failed(handoff, "the context answered for disagg_request_id " + dp.get("disagg_request_id")
                    + ", not " + expected, held);
        }
        JsonNode promptIds = answer.get("prompt_token_ids");
        if (contextFirst && (promptIds == null || !promptIds.isArray() || promptIds.isEmpty())) {
            throw failed(handoff, "the context answer carries no prompt_token_ids for the generation's prompt", held);
        }
        Instant deadline = contextFirst ? sentAt.plus(settings.hold()).minus(settings.decodeMargin()) : null;
        JsonNode usage = answer.get("usage");
        TransferData data = new TransferData(dp, contextFirst ? promptIds : null,
                usage != null && usage.isObject() ? usage : null, expected, deadline, contextFirst ? heldUntil : null);
        return new PrefillResult.Ready(handoff.withTransferData(data.toStruct()), held);
    }

    private static EngineException failed(Handoff handoff, String message, List<HeldKv> held) {
        return EngineException.sentFinal(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED,
                "context leg on " + handoff.prefill().name() + ": " + Json.abbreviate(message)).withHeld(held);
    }
}
