package io.handoff.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.vllm.VllmConfig;
import io.handoff.simulator.vllm.VllmEngine;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class FleetAndAdminTest extends SimTestBase {

    private static ObjectNode prefill(String model) {
        ObjectNode o = Http.obj().put("model", model).put("prompt", "a shared clock for the whole fleet")
            .put("max_tokens", 1);
        o.putObject("kv_transfer_params").put("do_remote_decode", true);
        return o;
    }

    @Test
    void fleetStartsOnePrefillAndOneDecodePerFamilyOnASharedClock() {
        try (SimFleet fleet = SimFleet.start(vertx, 0, Map.of("model", "fleet-model"))) {
            assertEquals(6, fleet.engines().size());
            assertEquals(6, fleet.describe().size());
            for (SimEngine e : fleet.engines()) {
                JsonNode s = SimHttp.get(e.baseUrl() + "/sim/stats").json;
                assertEquals(e.family().wire(), s.path("family").asText());
                assertEquals(e.role().wire(), s.path("role").asText());
                assertEquals(200, SimHttp.get(e.baseUrl() + "/health").status);
            }
            SimEngine vp = fleet.get(Family.VLLM, Role.PREFILL);
            SimHttp.Resp p = SimHttp.post(vp.baseUrl() + "/v1/completions", prefill("fleet-model"));
            assertEquals(200, p.status, p.raw);
            SimEngine tc = fleet.get(Family.TRTLLM, Role.PREFILL);
            ObjectNode ctx = Http.obj().put("model", "fleet-model").put("prompt", "x").put("max_tokens", 1);
            ctx.putObject("disaggregated_params").put("request_type", "context_only")
                .put("disagg_request_id", (1L << 40) + 7);
            assertEquals(200, SimHttp.post(tc.baseUrl() + "/v1/completions", ctx).status);
            assertEquals(1, vp.stat("kv_sessions_pinned_now"));
            assertEquals(1, tc.stat("kv_sessions_pinned_now"));

            // one advance over HTTP on one engine moves the clock every engine of the fleet reads
            SimHttp.post(tc.baseUrl() + "/sim/clock/advance", "{\"ms\":481000}");
            awaitStat(vp, "freed_by_timeout", 1);
            awaitStat(tc, "freed_by_timeout", 1);
        }
    }

    @Test
    void leakFaultKeepsExpiredHoldsAndCountsThem() {
        VllmConfig c = new VllmConfig();
        c.model = "m";
        c.abortRequestTimeoutMs = 50;
        VllmEngine e = start(new VllmEngine(c));
        SimHttp.post(e.baseUrl() + "/sim/faults", "{\"leak\":true}");
        SimHttp.post(e.baseUrl() + "/v1/completions", prefill("m"));
        awaitStat(e, "leaked_total", 1);
        assertEquals(1, e.stat("leaked"));
        assertEquals(1, e.stat("leaked_total"));
        assertEquals(1, e.stat("kv_sessions_pinned_now"));
        assertEquals(0, e.stat("freed_by_timeout"));
        JsonNode holds = SimHttp.get(e.baseUrl() + "/sim/holds").json;
        assertEquals("parked", holds.path(0).path("kind").asText());
        assertTrue(holds.path(0).path("leaked").asBoolean());

        SimHttp.Resp reset = SimHttp.post(e.baseUrl() + "/sim/reset", "");
        assertEquals(0, reset.json.path("kv_sessions_pinned_now").asInt());
        assertEquals(0, reset.json.path("leaked_total").asInt());
        assertEquals(false, SimHttp.get(e.baseUrl() + "/sim/faults").json.path("leak").asBoolean());
    }

    @Test
    void servesThousandsOfRequestsPerSecond() {
        VllmConfig c = new VllmConfig();
        c.model = "m";
        VllmEngine e = start(new VllmEngine(c));
        HttpClient client = vertx.createHttpClient(new HttpClientOptions().setMaxPoolSize(32).setKeepAlive(true));
        String body = "{\"model\":\"m\",\"prompt\":\"benchmark me\",\"max_tokens\":8}";
        int total = 10_000;
        AtomicInteger left = new AtomicInteger(total);
        AtomicInteger ok = new AtomicInteger();
        Promise<Void> done = Promise.promise();
        AtomicInteger lanes = new AtomicInteger(32);
        long t0 = System.nanoTime();
        for (int i = 0; i < 32; i++) {
            lane(client, e.port(), body, left, ok, lanes, done);
        }
        done.future().toCompletionStage().toCompletableFuture().join();
        double perSecond = total / ((System.nanoTime() - t0) / 1e9);
        System.out.printf("simulator throughput (client in the same JVM): %.0f requests/s%n", perSecond);
        assertEquals(total, ok.get());
        assertTrue(perSecond > 200, "throughput floor (a sanity check, not a benchmark): " + perSecond);
        assertEquals(0, e.stat("running"));
        assertEquals(total, e.stat("requests_total"));
        client.close();
    }

    private static void lane(HttpClient client, int port, String body, AtomicInteger left, AtomicInteger ok,
        AtomicInteger lanes, Promise<Void> done) {
        if (left.decrementAndGet() < 0) {
            if (lanes.decrementAndGet() == 0) {
                done.tryComplete();
            }
            return;
        }
        client.request(new RequestOptions().setMethod(HttpMethod.POST).setPort(port).setHost("127.0.0.1")
            .setURI("/v1/completions")).compose(r -> r.send(Buffer.buffer(body)).compose(resp -> {
                if (resp.statusCode() == 200) {
                    ok.incrementAndGet();
                }
                return resp.body();
            })).onComplete(ar -> lane(client, port, body, left, ok, lanes, done));
    }
}
