package io.handoff.simulator.trtllm;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.Http;

/** {@code /v1/models}, {@code /server_info}, {@code /metrics} (JSON iteration stats), {@code /prometheus/metrics}. */
final class TrtllmDiscovery {
    private TrtllmDiscovery() {
    }

    static ObjectNode models(TrtllmEngine e) {
        ObjectNode o = Http.obj().put("object", "list");
        o.putArray("data").addObject().put("id", e.engineConfig().model).put("object", "model")
            .put("created", e.identity().startedAtMs() / 1000).put("owned_by", "tensorrt_llm");
        return o;
    }

    static ObjectNode serverInfo(TrtllmEngine e) {
        ObjectNode o = Http.obj();
        ObjectNode dp = o.putObject("disaggregated_params");
        dp.put("ctx_dp_rank", 0);
        dp.putArray("ctx_info_endpoint").add(e.ctxInfoEndpoint());
        return o;
    }

    static ArrayNode iterationStats(TrtllmEngine e) {
        ObjectNode s = e.stats();
        ArrayNode a = Http.arr();
        ObjectNode it = a.addObject();
        it.put("iter", s.get("requests_total").asLong());
        it.put("numActiveRequests", s.get("running").asInt());
        it.put("numQueuedRequests", s.get("waiting").asInt());
        ObjectNode kv = it.putObject("kvCacheStats");
        kv.put("maxNumBlocks", s.get("kv_blocks_total").asLong());
        kv.put("freeNumBlocks", s.get("kv_blocks_free").asLong());
        kv.put("usedNumBlocks", s.get("kv_blocks_total").asLong() - s.get("kv_blocks_free").asLong());
        kv.put("tokensPerBlock", e.engineConfig().blockSize);
        return a;
    }

    static String prometheus(TrtllmEngine e) {
        ObjectNode s = e.stats();
        StringBuilder sb = new StringBuilder();
        line(sb, "trtllm_num_requests_running", "gauge", s.get("running").asDouble());
        line(sb, "trtllm_num_requests_waiting", "gauge", s.get("waiting").asDouble());
        double total = s.get("kv_blocks_total").asDouble();
        line(sb, "trtllm_kv_cache_utilization", "gauge", (total - s.get("kv_blocks_free").asDouble()) / total);
        line(sb, "trtllm_kv_transfer_timeouts_total", "counter", s.get(TrtllmEngine.TRANSFER_TIMEOUTS).asDouble());
        return sb.toString();
    }

    private static void line(StringBuilder sb, String name, String type, double v) {
        sb.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        sb.append(name).append(' ').append(v).append('\n');
    }
}
