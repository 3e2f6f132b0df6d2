package io.handoff.simulator.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.Http;
import io.handoff.simulator.SimHttp;
import io.handoff.simulator.SimTestBase;

/** What a proxy (the toy proxy / llm-d sidecar) does around vLLM engines, for tests. */
abstract class VllmTestSupport extends SimTestBase {
    static final String PROMPT = "The quick brown fox jumps over the lazy dog again and again";

    static VllmConfig cfg() {
        VllmConfig c = new VllmConfig();
        c.model = "m";
        return c;
    }

    static ObjectNode completion(String prompt, int maxTokens) {
        ObjectNode o = Http.obj().put("model", "m").put("prompt", prompt).put("max_tokens", maxTokens);
        o.put("ignore_eos", true);
        return o;
    }

    static ObjectNode chat(String content, int maxTokens) {
        ObjectNode o = Http.obj().put("model", "m").put("max_tokens", maxTokens);
        o.putArray("messages").addObject().put("role", "user").put("content", content);
        return o;
    }

    /** The prefill leg the toy proxy sends: max_tokens 1, stream false, nulled params. */
    static ObjectNode prefillOf(ObjectNode client) {
        ObjectNode p = client.deepCopy();
        p.put("max_tokens", 1);
        p.put("stream", false);
        p.remove("stream_options");
        p.remove("min_tokens");
        ObjectNode k = p.putObject("kv_transfer_params");
        k.put("do_remote_decode", true).put("do_remote_prefill", false).putNull("remote_engine_id")
            .putNull("remote_block_ids").putNull("remote_host").putNull("remote_port");
        return p;
    }

    /** The decode leg: the original body plus the prefill's params verbatim. */
    static ObjectNode decodeOf(ObjectNode client, JsonNode params) {
        ObjectNode d = client.deepCopy();
        d.set("kv_transfer_params", params);
        return d;
    }

    static JsonNode prefill(VllmEngine p, String path, ObjectNode client) {
        SimHttp.Resp r = SimHttp.post(p.baseUrl() + path, prefillOf(client));
        if (r.status != 200) {
            throw new AssertionError("prefill failed: " + r.status + " " + r.raw);
        }
        return r.json.get("kv_transfer_params");
    }

    static String text(JsonNode resp) {
        JsonNode c = resp.path("choices").path(0);
        return c.has("text") ? c.get("text").asText() : c.path("message").path("content").asText();
    }
}
