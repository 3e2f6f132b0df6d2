package io.handoff.gateway.deploy;

import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The metric names found in PromQL: only metrics, whatever surrounds them. */
class PromQlTest {

    @Test
    void findsTheMetricsAndNothingElse() {
        assertEquals(Set.of("handoff_generate_first_token_seconds_bucket"), PromQl.metricNames(
                "histogram_quantile(0.95, sum by (le, route) (rate(handoff_generate_first_token_seconds_bucket"
                        + "{route=~\"$route\", style!='x y'}[$__rate_interval])))"));
        assertEquals(Set.of("handoff_drain", "handoff_sessions", "handoff_sessions_engine_held"), PromQl.metricNames(
                "(sum(max by (state) (handoff_sessions{state=~\"ALLOCATED|READY\"})) + max(handoff_sessions_engine_held))"
                        + " > 0 and max(handoff_drain{figure=\"active\"}) == 1"));
        assertEquals(Set.of("a_total", "b_total"), PromQl.metricNames(
                "sum(rate(a_total[5m] offset 1h)) / on (route) group_left (pool) sum by(route)(b_total) > 1e3"));
        assertEquals(Set.of("handoff_generate_accepted_total"),
                PromQl.metricNames("label_values(handoff_generate_accepted_total, route)"));
    }
}
