package io.handoff.simulator.sglang;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.Http;

/** {@code /server_info}, {@code /model_info}, {@code /v1/loads}, {@code /v1/models}, {@code /metrics}. */
final class SglangDiscovery {
    private SglangDiscovery() {
    }

    static ObjectNode serverInfo(SglangEngine e) {
        SglangConfig c = e.cfg;
        ObjectNode o = Http.obj();
        o.put("model_path", c.model);
        o.put("served_model_name", c.model);
        o.put("tokenizer_path", c.model);
        o.put("host", c.host);
        o.put("port", e.port());
        o.put("tp_size", 1);
        o.put("dp_size", 1);
        o.put("pp_size", 1);
        o.put("enable_dp_attention", false);
        o.put("load_balance_method", "prefill".equals(c.disaggregationMode()) ? "follow_bootstrap_room"
            : "round_robin");
        o.put("disaggregation_mode", c.disaggregationMode());
        o.put("disaggregation_bootstrap_port", e.bootstrapPort());
        o.put("disaggregation_transfer_backend", c.transferBackend);
        o.putNull("disaggregation_ib_device");
        o.putNull("disaggregation_decode_tp");
        o.putNull("disaggregation_decode_dp");
        o.putNull("dist_init_addr");
        o.put("max_running_requests", c.maxRunning);
        o.put("context_length", c.maxModelLen);
        o.put("is_embedding", false);
        o.put("weight_version", "default");
        o.put("version", "0.5.0+sim");
        o.put("max_total_num_tokens", c.totalBlocks * c.blockSize);
        o.put("max_req_input_len", c.maxModelLen - 1);
        o.put("page_size", c.blockSize);
        o.putArray("internal_states").addObject().put("last_gen_throughput", 0.0);
        return o;
    }

    static ObjectNode modelInfo(SglangEngine e) {
        ObjectNode o = Http.obj();
        o.put("model_path", e.cfg.model);
        o.put("tokenizer_path", e.cfg.model);
        o.put("is_generation", true);
        o.putNull("preferred_sampling_params");
        o.put("weight_version", "default");
        o.put("has_image_understanding", false);
        o.put("has_audio_understanding", false);
        o.put("model_type", "llama");
        o.putArray("architectures").add("LlamaForCausalLM");
        return o;
    }

    static ObjectNode loads(SglangEngine e) {
        ObjectNode s = e.stats();
        ObjectNode o = Http.obj();
        o.put("timestamp", System.currentTimeMillis() / 1000.0);
        o.put("version", "0.5.0+sim");
        o.put("accelerator", "sim");
        o.put("num_accelerators", 1);
        ObjectNode l = o.putArray("loads").addObject();
        int total = e.cfg.totalBlocks * e.cfg.blockSize;
        int used = (int) (s.get("kv_blocks_total").asLong() - s.get("kv_blocks_free").asLong()) * e.cfg.blockSize;
        l.put("dp_rank", 0);
        l.put("num_running_reqs", s.get("running").asInt());
        l.put("num_waiting_reqs", s.get("waiting").asInt());
        l.put("num_used_tokens", used);
        l.put("max_total_num_tokens", total);
        l.put("token_usage", (double) used / total);
        ObjectNode d = l.putObject("disaggregation");
        d.put("mode", e.cfg.disaggregationMode());
        d.put("prefill_prealloc_queue_reqs", s.get("prefill_bootstrap_queue_reqs").asInt());
        d.put("prefill_inflight_queue_reqs", s.get("prefill_inflight_queue_reqs").asInt());
        d.put("decode_prealloc_queue_reqs", 0);
        d.put("decode_transfer_queue_reqs", s.get("decode_transfer_queue_reqs").asInt());
        d.put("decode_retracted_queue_reqs", 0);
        return o;
    }

    static ObjectNode models(SglangEngine e) {
        ObjectNode o = Http.obj().put("object", "list");
        o.putArray("data").addObject().put("id", e.cfg.model).put("object", "model")
            .put("created", e.identity().startedAtMs() / 1000).put("owned_by", "sglang").put("root", e.cfg.model)
            .put("max_model_len", e.cfg.maxModelLen);
        return o;
    }

    static String metrics(SglangEngine e) {
        ObjectNode s = e.stats();
        String labels = "{model_name=\"" + e.cfg.model + "\"}";
        StringBuilder sb = new StringBuilder();
        line(sb, "sglang:num_running_reqs", "gauge", labels, s.get("running").asDouble());
        line(sb, "sglang:num_queue_reqs", "gauge", labels, s.get("waiting").asDouble());
        double total = s.get("kv_blocks_total").asDouble();
        line(sb, "sglang:token_usage", "gauge", labels, (total - s.get("kv_blocks_free").asDouble()) / total);
        line(sb, "sglang:num_prefill_prealloc_queue_reqs", "gauge", labels,
            s.get("prefill_bootstrap_queue_reqs").asDouble());
        line(sb, "sglang:num_prefill_inflight_queue_reqs", "gauge", labels,
            s.get("prefill_inflight_queue_reqs").asDouble());
        line(sb, "sglang:num_decode_transfer_queue_reqs", "gauge", labels,
            s.get("decode_transfer_queue_reqs").asDouble());
        line(sb, "sglang:num_bootstrap_failed_reqs_total", "counter", labels,
            s.get(SglangEngine.BOOTSTRAP_FAILED).asDouble());
        line(sb, "sglang:num_transfer_failed_reqs_total", "counter", labels,
            s.get(SglangEngine.TRANSFER_FAILED).asDouble());
        return sb.toString();
    }

    private static void line(StringBuilder sb, String name, String type, String labels, double v) {
        sb.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        sb.append(name).append(labels).append(' ').append(v).append('\n');
    }
}
