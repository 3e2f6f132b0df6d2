package io.handoff.simulator.vllm;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.Http;

/** {@code /v1/models} and {@code /metrics} in vLLM's shapes. */
final class VllmDiscovery {
    private VllmDiscovery() {
    }

    static ObjectNode models(VllmEngine e) {
        ObjectNode o = Http.obj();
        o.put("object", "list");
        ObjectNode m = o.putArray("data").addObject();
        String model = e.engineConfig().model;
        long created = e.identity().startedAtMs() / 1000;
        m.put("id", model);
        m.put("object", "model");
        m.put("created", created);
        m.put("owned_by", "vllm");
        m.put("root", model);
        m.putNull("parent");
        m.put("max_model_len", e.engineConfig().maxModelLen);
        ObjectNode perm = m.putArray("permission").addObject();
        perm.put("id", "modelperm-" + e.identity().instanceId().replace("-", ""));
        perm.put("object", "model_permission");
        perm.put("created", created);
        perm.put("allow_create_engine", false);
        perm.put("allow_sampling", true);
        perm.put("allow_logprobs", true);
        perm.put("allow_search_indices", false);
        perm.put("allow_view", true);
        perm.put("allow_fine_tuning", false);
        perm.put("organization", "*");
        perm.putNull("group");
        perm.put("is_blocking", false);
        return o;
    }

    static String metrics(VllmEngine e) {
        ObjectNode s = e.stats();
        String labels = "{engine=\"0\",model_name=\"" + e.engineConfig().model + "\"}";
        StringBuilder sb = new StringBuilder();
        gauge(sb, "vllm:num_requests_running", "Number of requests in model execution batches.", labels,
            s.get("running").asDouble());
        gauge(sb, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", labels,
            s.get("waiting").asDouble());
        double total = s.get("kv_blocks_total").asDouble();
        gauge(sb, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", labels,
            (total - s.get("kv_blocks_free").asDouble()) / total);
        sb.append("# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n");
        sb.append("# TYPE vllm:cache_config_info gauge\n");
        sb.append("vllm:cache_config_info{block_size=\"").append(e.engineConfig().blockSize)
            .append("\",engine=\"0\",num_gpu_blocks=\"").append(e.engineConfig().totalBlocks).append("\"} 1.0\n");
        counter(sb, "vllm:request_success", "Count of successfully processed requests.", labels,
            s.get("requests_total").asDouble() - s.get("requests_failed").asDouble()
                - s.get("requests_aborted").asDouble());
        counter(sb, "vllm:nixl_num_kv_expired_reqs", "Number of requests whose KV blocks expired.", labels,
            s.get(VllmEngine.EXPIRED_REQS).asDouble());
        counter(sb, "vllm:nixl_num_failed_transfers", "Number of failed NIXL KV cache transfers.", labels,
            s.get(VllmEngine.FAILED_TRANSFERS).asDouble());
        counter(sb, "vllm:nixl_num_failed_notifications", "Number of failed NIXL notifications.", labels,
            s.get(VllmEngine.FAILED_NOTIFICATIONS).asDouble());
        return sb.toString();
    }

    private static void gauge(StringBuilder sb, String name, String help, String labels, double v) {
        sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
        sb.append("# TYPE ").append(name).append(" gauge\n");
        sb.append(name).append(labels).append(' ').append(v).append('\n');
    }

    private static void counter(StringBuilder sb, String name, String help, String labels, double v) {
        sb.append("# HELP ").append(name).append("_total ").append(help).append('\n');
        sb.append("# TYPE ").append(name).append("_total counter\n");
        sb.append(name).append("_total").append(labels).append(' ').append(v).append('\n');
    }
}
