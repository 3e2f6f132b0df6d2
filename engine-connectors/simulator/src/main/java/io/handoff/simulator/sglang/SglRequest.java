package io.handoff.simulator.sglang;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.Job;
import io.handoff.simulator.Rendezvous;
import io.handoff.simulator.Reject;
import io.handoff.simulator.SseWriter;
import io.handoff.simulator.Tokenizer;
import io.handoff.simulator.openai.OpenAiRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** One request to a simulated SGLang engine, from {@code /generate} or the OpenAI endpoints. */
final class SglRequest {
    /** Which endpoint it came to. */
    enum Api {
        GENERATE,
        COMPLETION,
        CHAT
    }

    final Api api;
    final String rid;
    final int[] promptIds;
    final int maxNew;
    final int minNew;
    final List<String> stop;
    final boolean ignoreEos;
    final int n;
    final boolean stream;
    final Long room;
    final String bootstrapHost;
    final Integer bootstrapPort;
    /** Set for the OpenAI endpoints. */
    final OpenAiRequest openai;
    final long created = System.currentTimeMillis() / 1000;
    final long arrivedNanos = System.nanoTime();
    Job job;
    SseWriter sse;
    /** Prefill: the decode it is paired with, once matched. */
    Rendezvous.Waiter pairedDecode;

    private SglRequest(Api api, ObjectNode b, int[] promptIds, int maxNew, int minNew, List<String> stop,
        boolean ignoreEos, int n, boolean stream, OpenAiRequest openai) {
        this.api = api;
        this.promptIds = promptIds;
        this.maxNew = maxNew;
        this.minNew = minNew;
        this.stop = stop;
        this.ignoreEos = ignoreEos;
        this.n = n;
        this.stream = stream;
        this.openai = openai;
        JsonNode rid = b.get("rid");
        if (rid != null && rid.isArray()) {
            if (rid.size() != 1) {
                throw Reject.badRequest("the simulator takes one request per call (batches are not simulated)");
            }
            rid = rid.get(0);
        }
        this.rid = rid == null || rid.isNull() ? UUID.randomUUID().toString().replace("-", "") : rid.asText();
        this.room = scalarLong(b.get("bootstrap_room"));
        JsonNode host = first(b.get("bootstrap_host"));
        this.bootstrapHost = host == null || host.isNull() ? null : host.asText();
        JsonNode port = first(b.get("bootstrap_port"));
        this.bootstrapPort = port == null || port.isNull() ? null : port.asInt();
    }

    static SglRequest generate(ObjectNode b) {
        int[] ids;
        JsonNode text = b.get("text");
        JsonNode inputIds = b.get("input_ids");
        if (inputIds != null && !inputIds.isNull()) {
            ids = OpenAiRequest.promptIds(inputIds);
        } else if (text != null && !text.isNull()) {
            ids = Tokenizer.encode(first(text).asText());
        } else {
            throw Reject.badRequest("Either text, input_ids or input_embeds should be provided.");
        }
        JsonNode sp = b.path("sampling_params");
        List<String> stop = new ArrayList<>();
        JsonNode s = sp.get("stop");
        if (s != null && s.isTextual()) {
            stop.add(s.asText());
        } else if (s != null && s.isArray()) {
            s.forEach(x -> stop.add(x.asText()));
        }
        return new SglRequest(Api.GENERATE, b, ids, sp.path("max_new_tokens").asInt(128),
            sp.path("min_new_tokens").asInt(0), stop, sp.path("ignore_eos").asBoolean(false), sp.path("n").asInt(1),
            b.path("stream").asBoolean(false), null);
    }

    static SglRequest openai(OpenAiRequest.Kind kind, ObjectNode b) {
        OpenAiRequest r = OpenAiRequest.parse(kind, b, 16, 128);
        return new SglRequest(kind == OpenAiRequest.Kind.CHAT ? Api.CHAT : Api.COMPLETION, b, r.promptIds,
            r.maxTokens, r.minTokens, r.stop, r.ignoreEos, r.n, r.stream, r);
    }

    boolean hasRoom() {
        return room != null;
    }

    /** n>1 with one scalar room: every sample would reuse the room; the pair never completes. */
    boolean roomReusedBySamples() {
        return n > 1;
    }

    private static JsonNode first(JsonNode v) {
        if (v != null && v.isArray()) {
            if (v.size() != 1) {
                throw Reject.badRequest("the simulator takes one request per call (batches are not simulated)");
            }
            return v.get(0);
        }
        return v;
    }

    private static Long scalarLong(JsonNode v) {
        JsonNode f = first(v);
        if (f == null || f.isNull()) {
            return null;
        }
        if (!f.canConvertToLong()) {
            throw Reject.badRequest("bootstrap_room must be an integer");
        }
        return f.asLong();
    }
}
