package io.handoff.connector.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.connector.openai.completion.CompletionStreams;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.openengine.v1.ErrorCode;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads the producer's non-streaming answer to a prefill leg.
 *
 * <ul>
 * <li>Parameters present: the KV is parked; the result is Ready, with the hold recorded as {@link HeldKv}. This holds
 * even when the producer stopped on its first token (newer builds park then too): the consumer reading the blocks is
 * what frees them early, so the decode still runs.</li>
 * <li>No parameters and a stop on the first token, where the client allowed stopping there: the request is complete;
 * the result is Finished with the producer's answer and nothing held (the producer freed its blocks).</li>
 * <li>No parameters otherwise: the producer did not park (no KV connector, an abort, an error). The leg fails with
 * KV_TRANSFER_FAILED rather than falling back to a local prefill on the consumer, which would be a bypass the route
 * did not choose.</li>
 * </ul>
 */
final class PrefillAnswer {

    static final String HELD_RESOURCE = "parked-prefill-kv";

    private PrefillAnswer() {
    }

    /**
     * @param sentAt     when the prefill was sent: the producer's timer cannot have started earlier
     * @param answeredAt when its answer arrived: the producer's timer started before this
     */
    static PrefillResult read(JsonNode answer, Handoff handoff, VllmSettings settings, Instant sentAt,
            Instant answeredAt) {
        JsonNode params = answer.get("kv_transfer_params");
        String finish = answer.path("choices").path(0).path("finish_reason").asText("");
        if (params == null || params.isNull()) {
            if ("stop".equals(finish) && mayStopAtFirstToken(handoff)) {
                return new PrefillResult.Finished(CompletionStreams.events(answer, handoff.requestId()), List.of());
            }
            throw EngineException.sentFinal(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED,
                    "prefill on " + handoff.prefill().name() + " answered without kv_transfer_params (finish_reason="
                            + finish + "): the producer did not park the KV; is its NixlConnector configured?");
        }
        KvTransferParams parsed = KvTransferParams.fromProducer(params, handoff.prefill());
        // capacity accounting needs the latest possible end, the decode guard the earliest
        Instant heldUntil = answeredAt.plus(settings.hold());
        Instant decodeDeadline = sentAt.plus(settings.hold()).minus(settings.unsafeTail());
        HeldKv held = new HeldKv("prefill@" + handoff.prefill().name(), handoff.prefill(), HELD_RESOURCE,
                Map.of("remote_request_id", parsed.remoteRequestId(),
                        "remote_engine_id", parsed.remoteEngineId(),
                        "x_request_id", handoff.requestId(),
                        "hold_mode", settings.holdMode().name().toLowerCase(Locale.ROOT)),
                heldUntil, false, true); // NIXL frees the blocks once the consumer has read them
        return new PrefillResult.Ready(handoff.withTransferData(parsed.toStruct(decodeDeadline, heldUntil)),
                List.of(held));
    }

    /**
     * The producer's hold when its answer was never seen: without kv_transfer_params its native id is unknown, so
     * the hold is named by the request id both legs share; vLLM frees it only on its timer.
     */
    static HeldKv unseen(Handoff handoff, VllmSettings settings, Instant now) {
        return new HeldKv("prefill@" + handoff.prefill().name(), handoff.prefill(), HELD_RESOURCE,
                Map.of("x_request_id", handoff.requestId(),
                        "hold_mode", settings.holdMode().name().toLowerCase(Locale.ROOT)),
                now.plus(settings.hold()), false, false);
    }

    /**
     * The prefill leg caps min_tokens at 1, so a client that asked for more than one token before any stop could see
     * the producer stop where the full request would not have.
     */
    private static boolean mayStopAtFirstToken(Handoff handoff) {
        var stopping = handoff.request().getStopping();
        return !stopping.hasMinTokens() || stopping.getMinTokens() <= 1;
    }
}
