package io.handoff.connector.openai.http;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class PrometheusTextTest {

    @Test
    void sumsLabelSetsAndSkipsComments() {
        PrometheusText text = PrometheusText.parse("""
                # HELP vllm:num_requests_running Number of requests.
                # TYPE vllm:num_requests_running gauge
                vllm:num_requests_running{engine="0",model_name="a b"} 2.0
                vllm:num_requests_running{engine="1",model_name="a b"} 3.0
                vllm:kv_cache_usage_perc 0.25
                broken_metric{x="1"} not-a-number
                """);
        assertEquals(Optional.of(5.0), text.sum("vllm:num_requests_running"));
        assertEquals(Optional.of(0.25), text.sum("vllm:kv_cache_usage_perc"));
        assertEquals(Optional.empty(), text.sum("broken_metric"));
        assertEquals(Optional.empty(), text.sum("absent"));
    }
}
