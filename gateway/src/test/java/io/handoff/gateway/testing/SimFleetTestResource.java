package io.handoff.gateway.testing;

import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimEngine;
import io.handoff.simulator.SimFleet;
import io.handoff.simulator.vllm.VllmConfig;
import io.handoff.simulator.vllm.VllmEngine;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.vertx.core.Vertx;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Simulated engines of each HTTP family, in this JVM on free ports, and the routes of {@link ControlPlaneProfile}
 * to them: one healthy route per family, one whose prefill pool holds an SGLang decode engine (wrong role) and one
 * whose decode pool holds a vLLM engine serving another model (wrong model).
 */
public class SimFleetTestResource implements QuarkusTestResourceLifecycleManager {

    public static final String ENGINE_MODEL = "sim-model";

    private static volatile SimFleet fleet;
    private static volatile VllmEngine otherModel;
    private Vertx vertx;

    /** The engine of a family and role, so that a test can crash and restart it. */
    public static SimEngine engine(Family family, Role role) {
        return fleet.get(family, role);
    }

    /** Every engine of the profile, the other model's included, so that a test can read what they all received. */
    public static List<SimEngine> engines() {
        List<SimEngine> all = new ArrayList<>(fleet.engines());
        all.add(otherModel);
        return all;
    }

    @Override
    public Map<String, String> start() {
        vertx = Vertx.vertx();
        fleet = SimFleet.start(vertx, 0, Map.of("model", ENGINE_MODEL, "token-interval-ms", "20"));
        VllmConfig other = new VllmConfig();
        other.role = Role.DECODE;
        other.model = "other-model";
        otherModel = new VllmEngine(other).startBlocking(vertx);
        return routeProperties();
    }

    /**
     * The routes of the profile as configuration keys, to the engines running now: what the gateway starts with,
     * and the baseline a test that reloads the routes writes back.
     */
    public static Map<String, String> routeProperties() {
        Map<String, String> c = new LinkedHashMap<>();
        String bootstrap = Integer.toString(engine(Family.SGLANG, Role.PREFILL).auxPort("bootstrap"));
        route(c, "vllm", "m-vllm", "vllm", url(Family.VLLM, Role.PREFILL), url(Family.VLLM, Role.DECODE),
                "context-first", "context-first");
        c.put("handoff.routes.vllm.options.hold-mode", "fixed");
        c.put("handoff.routes.vllm.options.hold-seconds", "480");
        c.put("handoff.routes.vllm.bypass.when", "explicit");
        route(c, "sglang", "m-sglang", "sglang", url(Family.SGLANG, Role.PREFILL), url(Family.SGLANG, Role.DECODE),
                "concurrent", "concurrent,generation-first");
        c.put("handoff.routes.sglang.options.bootstrap-port", bootstrap);
        route(c, "trtllm", "m-trtllm", "trtllm", url(Family.TRTLLM, Role.PREFILL), url(Family.TRTLLM, Role.DECODE),
                "context-first", "context-first,generation-first");
        c.put("handoff.routes.trtllm.options.schedule-styles", "context-first,generation-first");
        // an SGLang decode engine in the prefill pool: it answers as DECODE
        route(c, "wrong-role", "m-wrong-role", "sglang", url(Family.SGLANG, Role.DECODE),
                url(Family.SGLANG, Role.DECODE), "concurrent", "concurrent");
        c.put("handoff.routes.wrong-role.options.bootstrap-port", bootstrap);
        // a vLLM engine that serves another model in the decode pool
        route(c, "wrong-model", "m-wrong-model", "vllm", url(Family.VLLM, Role.PREFILL), otherModel.baseUrl(),
                "context-first", "context-first");
        c.put("handoff.routes.wrong-model.options.hold-mode", "fixed");
        c.put("handoff.routes.wrong-model.options.hold-seconds", "480");
        return c;
    }

    private static void route(Map<String, String> c, String name, String model, String family, String prefill,
            String decode, String defaultStyle, String styles) {
        String p = "handoff.routes." + name + ".";
        c.put(p + "model", model);
        c.put(p + "engine-model", ENGINE_MODEL);
        c.put(p + "family", family);
        c.put(p + "prefill", "p-0=" + prefill);
        c.put(p + "decode", "d-0=" + decode);
        c.put(p + "default-style", defaultStyle);
        c.put(p + "styles", styles);
        c.put(p + "prefill-timeout", "10s");
        c.put(p + "decode-idle-timeout", "10s");
    }

    private static String url(Family family, Role role) {
        return engine(family, role).baseUrl();
    }

    @Override
    public void stop() {
        if (otherModel != null) {
            otherModel.stopBlocking();
        }
        if (fleet != null) {
            fleet.close();
        }
        if (vertx != null) {
            vertx.close().toCompletionStage().toCompletableFuture().join();
        }
    }
}
