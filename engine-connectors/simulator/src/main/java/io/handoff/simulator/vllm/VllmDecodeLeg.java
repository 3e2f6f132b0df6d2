package io.handoff.simulator.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.EngineStats;
import io.handoff.simulator.Http;
import io.handoff.simulator.Job;
import io.handoff.simulator.OutputModel;
import io.handoff.simulator.PeerCall;
import io.handoff.simulator.SseWriter;

/**
 * The decode leg of a vLLM P/D request: a request whose {@code kv_transfer_params} say {@code do_remote_prefill}.
 *
 * <ul>
 *   <li>Lease builds start heartbeating the prefill as soon as the request arrives (even while it waits for a
 *       slot), every lease/6, until the read completes.</li>
 *   <li>Once admitted, it reads the blocks over the side channel. Success: it decodes from them (same tokens as an
 *       aggregated run). {@code unrecognized}: it decodes from garbage and answers 200 ({@code corrupt_kv_reads}),
 *       the vLLM silent-corruption trap. Transport or handshake failure: {@code kv_load_failure_policy} "fail" gives
 *       a generic 500 (an error event in a stream), "recompute" prefills locally.</li>
 *   <li>An abort before the read sends the "done" notification, so the prefill frees (freed_by_abort there). An abort
 *       during the read does not stop it: the prefill frees when the read completes.</li>
 * </ul>
 */
final class VllmDecodeLeg {
    private final VllmEngine engine;

    VllmDecodeLeg(VllmEngine engine) {
        this.engine = engine;
    }

    /** All keys the NixlConnector requires on a decode; without them it falls back to a local prefill. */
    static boolean complete(JsonNode p) {
        for (String k : new String[] {"remote_block_ids", "remote_engine_id", "remote_request_id", "remote_host",
            "remote_port"}) {
            JsonNode v = p.get(k);
            if (v == null || v.isNull()) {
                return false;
            }
        }
        return true;
    }

    private static final class State {
        long heartbeatTimer = -1;
        boolean reading;
        boolean read;
    }

    void start(VllmEngine.Call call, ObjectNode params) {
        Job job = engine.job(call);
        SseWriter w = engine.openStream(call);
        State st = new State();
        if (engine.cfg.mode == VllmConfig.Mode.LEASE) {
            long every = Math.max(1, engine.cfg.kvLeaseDurationMs / 6);
            st.heartbeatTimer = engine.vx().setPeriodic(every, t -> heartbeat(params));
        }
        job.onAbort(() -> {
            stopHeartbeats(st);
            if (!st.reading && !st.read) {
                notifyPrefill(params, "abort");
            }
        });
        int max = engine.effectiveMaxTokens(call.req);
        engine.sched().submit(job, engine.blocks(call.req.promptIds.length, max), j -> read(call, j, w, params, st));
    }

    private void read(VllmEngine.Call call, Job job, SseWriter w, ObjectNode params, State st) {
        st.reading = true;
        ObjectNode req = Http.obj();
        req.put("remote_engine_id", params.get("remote_engine_id").asText());
        req.put("remote_request_id", params.get("remote_request_id").asText());
        req.set("remote_block_ids", params.get("remote_block_ids"));
        req.put("consumer_engine_id", engine.identity().engineId());
        req.put("tp_size", engine.cfg.tpSize);
        PeerCall c = engine.post(params.get("remote_host").asText(), params.get("remote_port").asInt(),
            "/nixl/read", req);
        c.result().onComplete(ar -> {
            st.reading = false;
            stopHeartbeats(st);
            if (job.isAborted()) {
                return;
            }
            if (ar.failed() || ar.result().status != 200) {
                engine.counters().inc(VllmEngine.FAILED_TRANSFERS);
                if ("recompute".equals(engine.cfg.kvLoadFailurePolicy)) {
                    job.timer(engine.vx(), engine.recomputeMs(call.req.promptIds), () -> engine.generate(call, job, w,
                        OutputModel.fingerprint(call.req.promptIds), null));
                } else {
                    engine.failRequest(call, job, w, "Internal server error");
                }
                return;
            }
            st.read = true;
            JsonNode b = ar.result().body;
            long seed;
            if ("ok".equals(b.path("status").asText())) {
                seed = b.path("kv_fingerprint").asLong();
            } else {
                // the prefill freed (maybe reused) these blocks; the decode cannot tell and decodes garbage
                engine.counters().inc(EngineStats.CORRUPT_KV_READS);
                seed = OutputModel.corrupted(OutputModel.fingerprint(call.req.promptIds));
            }
            engine.generate(call, job, w, seed, null);
        });
    }

    private void heartbeat(ObjectNode params) {
        engine.counters().inc(VllmEngine.HEARTBEATS_SENT);
        ObjectNode hb = Http.obj().put("remote_engine_id", params.get("remote_engine_id").asText())
            .put("remote_request_id", params.get("remote_request_id").asText());
        engine.post(params.get("remote_host").asText(), params.get("remote_port").asInt(), "/nixl/heartbeat", hb)
            .result().onFailure(e -> engine.counters().inc(VllmEngine.FAILED_NOTIFICATIONS));
    }

    private void stopHeartbeats(State st) {
        if (st.heartbeatTimer >= 0) {
            engine.vx().cancelTimer(st.heartbeatTimer);
            st.heartbeatTimer = -1;
        }
    }

    /** Sends the "done" notification that frees the prefill's blocks without reading them. */
    void notifyPrefill(ObjectNode params, String reason) {
        ObjectNode n = Http.obj().put("remote_engine_id", params.path("remote_engine_id").asText())
            .put("remote_request_id", params.path("remote_request_id").asText()).put("reason", reason);
        engine.post(params.get("remote_host").asText(), params.get("remote_port").asInt(), "/nixl/notify", n)
            .result().onFailure(e -> engine.counters().inc(VllmEngine.FAILED_NOTIFICATIONS));
    }
}
