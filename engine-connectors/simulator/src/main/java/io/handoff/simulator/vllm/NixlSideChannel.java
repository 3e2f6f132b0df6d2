package io.handoff.simulator.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.simulator.FreeReason;
import io.handoff.simulator.Http;
import io.handoff.simulator.KvHold;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * The prefill side of the simulated NIXL transport, served on {@code remote_host:remote_port}. Real NIXL is a
 * ZMQ handshake plus RDMA reads and notifications; here it is three HTTP calls between simulators:
 * <ul>
 *   <li>{@code POST /nixl/read}: the decode reads the blocks of {@code remote_request_id}. A different
 *       {@code remote_engine_id} fails the handshake (409). An unknown request id (expired, or minted before a
 *       restart that kept the engine id) is "read" anyway and answered {@code unrecognized}: vLLM only logs
 *       "Potentially invalid KV blocks for unrecognized request" and the decode goes on with garbage.</li>
 *   <li>{@code POST /nixl/heartbeat}: lease builds; extends the hold to max(old, now + lease*2/3).</li>
 *   <li>{@code POST /nixl/notify}: the decode aborted (or rejected) before reading; the prefill frees.</li>
 * </ul>
 */
final class NixlSideChannel {
    private final VllmEngine engine;

    NixlSideChannel(VllmEngine engine) {
        this.engine = engine;
    }

    void routes(Router r) {
        r.post("/nixl/read").handler(this::read);
        r.post("/nixl/heartbeat").handler(this::heartbeat);
        r.post("/nixl/notify").handler(this::notifyDone);
        r.get("/nixl/health").handler(rc -> Http.json(rc.response(), 200,
            Http.obj().put("engine_id", engine.identity().engineId())));
    }

    private void read(RoutingContext rc) {
        JsonNode b = Http.parse(rc.body().asString());
        String engineId = b.path("remote_engine_id").asText();
        if (!engineId.equals(engine.identity().engineId())) {
            Http.json(rc.response(), 409, Http.obj().put("status", "handshake_failed")
                .put("reason", "Remote NIXL agent engine ID mismatch. Expected " + engineId + ", received "
                    + engine.identity().engineId()));
            return;
        }
        String id = b.path("remote_request_id").asText();
        KvHold h = engine.holdTable().get(id);
        if (h == null || !"parked".equals(h.kind())) {
            unrecognized(rc, id);
            return;
        }
        long latency = engine.engineConfig().transferLatencyMs;
        Runnable complete = () -> {
            KvHold still = engine.holdTable().get(id);
            if (still == null) {
                unrecognized(rc, id);
                return;
            }
            VllmEngine.Parked p = still.attachment();
            engine.holdTable().release(id, FreeReason.PULL);
            Http.json(rc.response(), 200, Http.obj().put("status", "ok").put("kv_fingerprint", p.fingerprint)
                .put("num_tokens", p.numTokens));
        };
        if (latency > 0) {
            engine.vx().setTimer(latency, t -> complete.run());
        } else {
            complete.run();
        }
    }

    private void unrecognized(RoutingContext rc, String id) {
        engine.counters().inc(VllmEngine.UNRECOGNIZED_READS);
        Http.json(rc.response(), 200, Http.obj().put("status", "unrecognized").put("message",
            "Potentially invalid KV blocks for unrecognized request " + id
                + " were retrieved by a decode worker. They may have expired."));
    }

    private void heartbeat(RoutingContext rc) {
        JsonNode b = Http.parse(rc.body().asString());
        engine.counters().inc(VllmEngine.HEARTBEATS_RECEIVED);
        KvHold h = engine.holdTable().get(b.path("remote_request_id").asText());
        if (h != null && "parked".equals(h.kind())) {
            engine.holdTable().extend(h, engine.cfg.kvLeaseDurationMs * 2 / 3);
        }
        rc.response().setStatusCode(200).end();
    }

    private void notifyDone(RoutingContext rc) {
        JsonNode b = Http.parse(rc.body().asString());
        engine.abortLedger().aborted("notify " + b.path("remote_request_id").asText());
        KvHold h = engine.holdTable().get(b.path("remote_request_id").asText());
        if (h != null && "parked".equals(h.kind())) {
            engine.holdTable().release(h.key(), FreeReason.ABORT);
        }
        rc.response().setStatusCode(200).end();
    }
}
