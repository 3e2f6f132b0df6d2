package io.handoff.gateway.testing;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The routes of the simulated fleet, as {@code handoff.routes.<name>.*} configuration. Each route's client model
 * name is the route's name. The shared routes tolerate many endpoint failures (peer-loss tests crash their
 * engines on purpose; the breaker has its own tests); the routes of one test each have their own engines' names.
 */
public final class FleetRoutes {

    /** One style per route, so each route's default style is the one under test. */
    public static final String VLLM_CONTEXT_FIRST = "vllm-context-first";
    public static final String SGLANG_CONCURRENT = "sglang-concurrent";
    public static final String SGLANG_GENERATION_FIRST = "sglang-generation-first";
    public static final String TRTLLM_CONTEXT_FIRST = "trtllm-context-first";
    public static final String TRTLLM_GENERATION_FIRST = "trtllm-generation-first";
    /** vLLM with two decode endpoints: the second vLLM decode engine first, then the shared one. */
    public static final String VLLM_TWO_DECODES = "vllm-two-decodes";
    /** vLLM with two prefill endpoints (the shared one, then the second) chosen by prefix-affinity. */
    public static final String VLLM_PREFIX_AFFINITY = "vllm-prefix-affinity";
    public static final String VLLM_BYPASS_ALWAYS = "vllm-bypass-always";
    public static final String VLLM_BYPASS_EXPLICIT = "vllm-bypass-explicit";
    public static final String VLLM_BYPASS_SHORT_PROMPT = "vllm-bypass-short-prompt";
    public static final String VLLM_BYPASS_PREFILL_UNAVAILABLE = "vllm-bypass-prefill-unavailable";
    public static final int SHORT_PROMPT_TOKENS = 16;
    /**
     * vLLM with two decode endpoints (the second vLLM decode engine first, then the shared one) that bypasses when
     * the decode endpoint chosen would prefill at most {@link #UNCACHED_PROMPT_TOKENS} of the prompt itself.
     */
    public static final String VLLM_BYPASS_UNCACHED_PROMPT = "vllm-bypass-uncached-prompt";
    public static final int UNCACHED_PROMPT_TOKENS = 32;
    /** vLLM whose decode endpoint is reached through {@link StallingProxy} and may be silent for a second only. */
    public static final String VLLM_STALLING_DECODE = "vllm-stalling-decode";
    public static final String VLLM_BYPASS_STALLING_DECODE = "vllm-bypass-stalling-decode";
    public static final Duration SHORT_IDLE = Duration.ofSeconds(1);
    /**
     * vLLM through {@link StallingProxy} (so a test holds a request running for as long as it likes) that runs one
     * request at a time (max-in-flight 1) and lets {@link #QUEUE_MAX_WAITING} more wait up to {@link #QUEUE_TIMEOUT}.
     */
    public static final String VLLM_QUEUED = "vllm-queued";
    /** As {@link #VLLM_QUEUED}, but full because each endpoint takes one request (max-outstanding-per-endpoint 1). */
    public static final String VLLM_QUEUED_ENDPOINTS = "vllm-queued-endpoints";
    public static final int QUEUE_MAX_WAITING = 2;
    public static final Duration QUEUE_TIMEOUT = Duration.ofSeconds(10);

    /** Every orchestrated route with the family serving it. */
    public static final Map<String, String> FAMILY_OF = Map.of(
            VLLM_CONTEXT_FIRST, "vllm",
            SGLANG_CONCURRENT, "sglang",
            SGLANG_GENERATION_FIRST, "sglang",
            TRTLLM_CONTEXT_FIRST, "trtllm",
            TRTLLM_GENERATION_FIRST, "trtllm");

    private final Map<String, String> config = new HashMap<>();

    private FleetRoutes() {
    }

    static Map<String, String> of(EngineFleet fleet) {
        FleetRoutes r = new FleetRoutes();
        String vllmPrefill = "prefill-0=" + fleet.vllm().prefill().baseUrl();
        String vllmDecode = "decode-0=" + fleet.vllm().decode().baseUrl();
        Map<String, String> vllmOptions = Map.of("hold-mode", "fixed",
                "hold-seconds", Long.toString(EngineFleet.HOLD.toSeconds()));
        r.route(VLLM_CONTEXT_FIRST, "vllm", vllmPrefill, vllmDecode, "context-first", vllmOptions);
        r.route(VLLM_TWO_DECODES, "vllm", vllmPrefill, "decode-1=" + fleet.vllm().secondDecode().baseUrl() + ","
                + vllmDecode, "context-first", vllmOptions);
        r.route(VLLM_PREFIX_AFFINITY, "vllm", vllmPrefill + ",prefill-1=" + fleet.vllm().secondPrefill().baseUrl(),
                vllmDecode, "context-first", vllmOptions);
        r.set(VLLM_PREFIX_AFFINITY, "prefill-policy", "prefix-affinity");

        String sglPrefill = "prefill-0=" + fleet.sglang().prefill().baseUrl();
        String sglDecode = "decode-0=" + fleet.sglang().decode().baseUrl();
        Map<String, String> sglOptions = Map.of("bootstrap-port", Integer.toString(fleet.sglangBootstrapPort()),
                "bootstrap-timeout-seconds", Long.toString(EngineFleet.HOLD.toSeconds()),
                "waiting-timeout-seconds", Long.toString(EngineFleet.HOLD.toSeconds()));
        r.route(SGLANG_CONCURRENT, "sglang", sglPrefill, sglDecode, "concurrent", sglOptions);
        r.route(SGLANG_GENERATION_FIRST, "sglang", sglPrefill, sglDecode, "generation-first", sglOptions);

        String ctx = "ctx-0=" + fleet.trtllm().prefill().baseUrl();
        String gen = "gen-0=" + fleet.trtllm().decode().baseUrl();
        for (String style : List.of("context-first", "generation-first")) {
            r.route("trtllm-" + style, "trtllm", ctx, gen, style, Map.of(
                    "schedule-styles", "context-first,generation-first",
                    "kv-transfer-timeout-ms", Long.toString(EngineFleet.HOLD.toMillis()),
                    "node-id", style.equals("context-first") ? "1" : "2"));
        }

        String stallingDecode = "decode-0=" + fleet.stallingVllmDecode().url();
        r.route(VLLM_STALLING_DECODE, "vllm", vllmPrefill, stallingDecode, "context-first", vllmOptions);
        r.set(VLLM_STALLING_DECODE, "decode-idle-timeout", SHORT_IDLE.toMillis() + "ms");
        r.route(VLLM_BYPASS_STALLING_DECODE, "vllm", vllmPrefill, stallingDecode, "context-first", vllmOptions);
        r.set(VLLM_BYPASS_STALLING_DECODE, "bypass.when", "always");
        r.set(VLLM_BYPASS_STALLING_DECODE, "decode-idle-timeout", SHORT_IDLE.toMillis() + "ms");

        r.route(VLLM_QUEUED, "vllm", vllmPrefill, stallingDecode, "context-first", vllmOptions);
        r.set(VLLM_QUEUED, "max-in-flight", "1");
        r.route(VLLM_QUEUED_ENDPOINTS, "vllm", vllmPrefill, stallingDecode, "context-first", vllmOptions);
        r.set(VLLM_QUEUED_ENDPOINTS, "max-outstanding-per-endpoint", "1");
        for (String queued : List.of(VLLM_QUEUED, VLLM_QUEUED_ENDPOINTS)) {
            r.set(queued, "queue.max-waiting", Integer.toString(QUEUE_MAX_WAITING));
            r.set(queued, "queue.timeout", QUEUE_TIMEOUT.toSeconds() + "s");
        }

        r.route(VLLM_BYPASS_ALWAYS, "vllm", vllmPrefill, vllmDecode, "context-first", vllmOptions);
        r.set(VLLM_BYPASS_ALWAYS, "bypass.when", "always");
        r.route(VLLM_BYPASS_EXPLICIT, "vllm", vllmPrefill, vllmDecode, "context-first", vllmOptions);
        r.set(VLLM_BYPASS_EXPLICIT, "bypass.when", "explicit");
        r.route(VLLM_BYPASS_SHORT_PROMPT, "vllm", vllmPrefill, vllmDecode, "context-first", vllmOptions);
        r.set(VLLM_BYPASS_SHORT_PROMPT, "bypass.when", "short-prompt");
        r.set(VLLM_BYPASS_SHORT_PROMPT, "bypass.short-prompt-tokens", Integer.toString(SHORT_PROMPT_TOKENS));
        r.route(VLLM_BYPASS_UNCACHED_PROMPT, "vllm", vllmPrefill, "decode-1=" + fleet.vllm().secondDecode().baseUrl()
                + "," + vllmDecode, "context-first", vllmOptions);
        r.set(VLLM_BYPASS_UNCACHED_PROMPT, "bypass.uncached-prompt-tokens", Integer.toString(UNCACHED_PROMPT_TOKENS));
        r.route(VLLM_BYPASS_PREFILL_UNAVAILABLE, "vllm", vllmPrefill, vllmDecode, "context-first", vllmOptions);
        r.set(VLLM_BYPASS_PREFILL_UNAVAILABLE, "bypass.when", "prefill-unavailable");
        // one failed prefill opens this route's breaker, for an hour of the test clock
        r.set(VLLM_BYPASS_PREFILL_UNAVAILABLE, "breaker-failures", "1");
        r.set(VLLM_BYPASS_PREFILL_UNAVAILABLE, "breaker-open-for", "1h");
        return Map.copyOf(r.config);
    }

    private void route(String name, String family, String prefill, String decode, String style,
            Map<String, String> options) {
        set(name, "model", name);
        set(name, "engine-model", EngineFleet.ENGINE_MODEL);
        set(name, "family", family);
        set(name, "prefill", prefill);
        set(name, "decode", decode);
        set(name, "default-style", style);
        set(name, "styles", style);
        set(name, "breaker-failures", "1000");
        options.forEach((k, v) -> set(name, "options." + k, v));
    }

    private void set(String route, String key, String value) {
        config.put("handoff.routes." + route + "." + key, value);
    }
}
