package io.handoff.simulator.sglang;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.Generation;
import io.handoff.simulator.Http;
import io.handoff.simulator.Tokenizer;
import java.util.ArrayList;
import java.util.List;

/** SGLang's native {@code /generate} output and its error shapes. */
final class SglangWire {
    private SglangWire() {
    }

    /** {@code finish_reason} as the scheduler reports it. */
    static ObjectNode finishReason(Generation g) {
        ObjectNode f = Http.obj();
        if ("length".equals(g.finishReason())) {
            f.put("type", "length").put("length", g.size());
        } else if (g.stopReason() != null) {
            f.put("type", "stop").put("matched", g.stopReason().toString());
        } else {
            f.put("type", "stop").put("matched", Tokenizer.EOS);
        }
        return f;
    }

    /** What a prefill reports once its KV was transferred. */
    static ObjectNode prefillFinish() {
        return Http.obj().put("type", "length").put("length", 0);
    }

    static ObjectNode abortFinish(String message, Integer statusCode) {
        ObjectNode f = Http.obj().put("type", "abort").put("message", message);
        if (statusCode != null) {
            f.put("status_code", statusCode);
            f.put("err_type", statusCode == 503 ? "ServiceUnavailable" : "InternalServerError");
        }
        return f;
    }

    /** One {@code /generate} output with the first {@code upTo} tokens (streaming is cumulative by default). */
    static ObjectNode output(SglRequest r, Generation g, int upTo, JsonNode finish, boolean last) {
        ObjectNode o = Http.obj();
        o.put("text", g == null ? "" : g.text(upTo));
        ArrayNode ids = o.putArray("output_ids");
        for (int i = 0; i < upTo; i++) {
            ids.add(g.id(i));
        }
        ObjectNode m = o.putObject("meta_info");
        m.put("id", r.rid);
        if (finish == null) {
            m.putNull("finish_reason");
        } else {
            m.set("finish_reason", finish);
        }
        m.put("prompt_tokens", r.promptIds.length);
        m.put("completion_tokens", upTo);
        m.put("cached_tokens", 0);
        m.put("weight_version", "default");
        if (last) {
            m.put("e2e_latency", (System.nanoTime() - r.arrivedNanos) / 1e9);
        }
        return o;
    }

    /** The index of the first event of {@link #streamEvents} that carries a token: the first, unless there is none. */
    static int firstTokenEvent(Generation g) {
        return g.size() == 0 ? Integer.MAX_VALUE : 0;
    }

    static List<String> streamEvents(SglRequest r, Generation g, JsonNode finish) {
        List<String> out = new ArrayList<>();
        int n = g.size();
        for (int i = 1; i <= n; i++) {
            out.add(Http.write(output(r, g, i, i == n ? finish : null, i == n)));
        }
        if (n == 0) {
            out.add(Http.write(output(r, g, 0, finish, true)));
        }
        return out;
    }

    /** The non-streaming error body of the OpenAI layer and of 5xx aborts. */
    static ObjectNode error(int status, String message) {
        String type;
        if (status == 400) {
            type = "BadRequestError";
        } else if (status == 404) {
            type = "NotFoundError";
        } else {
            type = String.valueOf(status);
        }
        return Http.obj().put("object", "error").put("message", message).put("type", type).putNull("param")
            .put("code", status);
    }
}
