package io.handoff.gateway.routing;

import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.session.SessionPolicy;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A route is negotiated with its connector (found on the class path as the gateway finds it) before anything runs,
 * and a setting the engine cannot honour natively is refused with a message that names the route and the setting.
 */
class RouteRefusalTest {

    private static final SessionPolicy DEPLOYMENT = new SessionPolicy(Duration.ofSeconds(30),
            Duration.ofMinutes(10), Duration.ofMinutes(10), 1000, ScheduleStyle.CONTEXT_FIRST,
            EnumSet.allOf(ScheduleStyle.class), true, 256, 65536);
    private static final RouteFactory FACTORY = new RouteFactory(RouteRegistry.discoverFamilies(), DEPLOYMENT,
            ProbesAsTheyAre.RUNNER);

    /** A route as an operator would configure it; each test changes one thing. */
    private record Route(String family, ScheduleStyle defaultStyle, Set<ScheduleStyle> styles, BypassPolicy bypass,
            Optional<Duration> leaseDefault, Optional<Duration> leaseMax, Map<String, String> options) {

        static Route vllm() {
            return new Route("vllm", ScheduleStyle.CONTEXT_FIRST, Set.of(ScheduleStyle.CONTEXT_FIRST),
                    BypassPolicy.NEVER, Optional.empty(), Optional.empty(),
                    Map.of("hold-mode", "fixed", "hold-seconds", "60"));
        }

        static Route sglang() {
            return new Route("sglang", ScheduleStyle.CONCURRENT, Set.of(ScheduleStyle.CONCURRENT),
                    BypassPolicy.NEVER, Optional.empty(), Optional.empty(), Map.of("bootstrap-port", "8998"));
        }

        static Route trtllm() {
            return new Route("trtllm", ScheduleStyle.CONTEXT_FIRST, Set.of(ScheduleStyle.CONTEXT_FIRST),
                    BypassPolicy.NEVER, Optional.empty(), Optional.empty(), Map.of("kv-transfer-timeout-ms", "60000"));
        }

        Route family(String f) {
            return new Route(f, defaultStyle, styles, bypass, leaseDefault, leaseMax, options);
        }

        Route styles(ScheduleStyle... s) {
            return new Route(family, defaultStyle, Set.of(s), bypass, leaseDefault, leaseMax, options);
        }

        Route bypass(BypassPolicy b) {
            return new Route(family, defaultStyle, styles, b, leaseDefault, leaseMax, options);
        }

        Route leaseDefault(Duration d) {
            return new Route(family, defaultStyle, styles, bypass, Optional.of(d), leaseMax, options);
        }

        Route leaseMax(Duration d) {
            return new Route(family, defaultStyle, styles, bypass, leaseDefault, Optional.of(d), options);
        }

        Route option(String key, String value) {
            Map<String, String> o = new HashMap<>(options);
            o.put(key, value);
            return new Route(family, defaultStyle, styles, bypass, leaseDefault, leaseMax, o);
        }

        RouteSettings settings() {
            return RouteSettings.builder("r1", "m", family).engineModel("sim-model")
                    .prefill(List.of(Endpoint.of("prefill-0", "http://127.0.0.1:1")))
                    .decode(List.of(Endpoint.of("decode-0", "http://127.0.0.1:2")))
                    .defaultStyle(defaultStyle).styles(styles).bypass(bypass)
                    .leaseDefault(leaseDefault).leaseMax(leaseMax).options(options).build();
        }
    }

    private static String refusal(Route route) {
        return assertThrows(IllegalArgumentException.class, () -> FACTORY.negotiate(route.settings())).getMessage();
    }

    private static void assertNames(String message, String... parts) {
        for (String part : parts) {
            assertTrue(message.contains(part), "'" + message + "' does not name " + part);
        }
    }

    @Test
    void aPoolWithoutEndpointsIsAcceptedOnlyWhenItIsDiscovered() {
        for (Route route : List.of(Route.vllm(), Route.sglang(), Route.trtllm())) {
            RouteSettings noDecode = route.settings().toBuilder().decode(List.of()).build();
            assertNames(assertThrows(IllegalArgumentException.class, () -> FACTORY.negotiate(noDecode, Set.of(
                    "prefill"))).getMessage(), "r1", "at least one endpoint");
            FACTORY.negotiate(noDecode, Set.of("decode"));
            FACTORY.negotiate(noDecode.toBuilder().prefill(List.of()).build(), Set.of("prefill", "decode"));
        }
    }

    @Test
    void aRouteTheEngineCanHonourIsAccepted() {
        ConnectorCapabilities caps = FACTORY.negotiate(Route.vllm().settings());
        assertEquals(Duration.ofSeconds(60), caps.engineHold());
        assertTrue(caps.localPrefill());
        FACTORY.negotiate(Route.sglang().styles(ScheduleStyle.CONCURRENT, ScheduleStyle.GENERATION_FIRST).settings());
        FACTORY.negotiate(Route.vllm().leaseMax(Duration.ofSeconds(60)).leaseDefault(Duration.ofSeconds(60))
                .bypass(new BypassPolicy(Set.of(BypassPolicy.Trigger.ALWAYS), 0)).settings());
    }

    @Test
    void aStyleTheEngineLacksIsRefused() {
        assertNames(refusal(Route.vllm().styles(ScheduleStyle.CONTEXT_FIRST, ScheduleStyle.GENERATION_FIRST)),
                "route r1", "styles", "generation-first", "vllm");
        assertNames(refusal(Route.sglang().styles(ScheduleStyle.CONCURRENT, ScheduleStyle.CONTEXT_FIRST)),
                "route r1", "styles", "context-first", "sglang");
        assertNames(refusal(Route.trtllm().styles(ScheduleStyle.CONTEXT_FIRST, ScheduleStyle.CONCURRENT)),
                "route r1", "concurrent");
        assertNames(refusal(Route.trtllm().option("schedule-styles", "context-first")
                .styles(ScheduleStyle.CONTEXT_FIRST, ScheduleStyle.GENERATION_FIRST)), "route r1", "styles",
                "generation-first");
    }

    @Test
    void aDefaultStyleOutsideTheStylesIsRefused() {
        Route route = new Route("vllm", ScheduleStyle.GENERATION_FIRST, Set.of(ScheduleStyle.CONTEXT_FIRST),
                BypassPolicy.NEVER, Optional.empty(), Optional.empty(), Route.vllm().options());
        assertNames(refusal(route), "route r1", "default-style", "generation-first");
    }

    @Test
    void aLeaseMaxLongerThanTheEngineHoldIsRefused() {
        assertNames(refusal(Route.vllm().leaseMax(Duration.ofSeconds(61))), "route r1", "lease-max", "PT1M1S",
                "vllm");
        assertNames(refusal(Route.vllm().option("hold-seconds", "3600").leaseMax(Duration.ofMinutes(11))),
                "route r1", "lease-max", "max-lease");
        assertNames(refusal(Route.vllm().leaseDefault(Duration.ofSeconds(90))), "route r1", "lease-default");
    }

    @Test
    void bypassOnAnEngineWithoutLocalPrefillIsRefused() {
        BypassPolicy always = new BypassPolicy(Set.of(BypassPolicy.Trigger.ALWAYS), 0);
        assertNames(refusal(Route.sglang().bypass(always)), "route r1", "bypass.when", "sglang");
    }

    @Test
    void oneEndpointNameForTwoEnginesIsRefused() {
        RouteSettings ok = Route.vllm().settings();
        RouteSettings clash = ok.toBuilder().prefill(List.of(Endpoint.of("node-1", "http://10.0.0.1:8000")))
                .decode(List.of(Endpoint.of("node-1", "http://10.0.0.2:8000"))).build();
        assertNames(assertThrows(IllegalArgumentException.class, () -> FACTORY.negotiate(clash)).getMessage(),
                "route r1", "prefill and decode", "node-1", "10.0.0.1", "10.0.0.2");
        // one engine in both pools under one name is one engine
        FACTORY.negotiate(ok.toBuilder().prefill(List.of(Endpoint.of("node-1", "http://10.0.0.1:8000")))
                .decode(List.of(Endpoint.of("node-1", "http://10.0.0.1:8000"))).build());
    }

    @Test
    void anUnknownFamilyIsRefused() {
        assertNames(refusal(Route.vllm().family("tgi")), "route r1", "family", "tgi", "vllm", "sglang", "trtllm");
    }

    @Test
    void aBadConnectorOptionIsRefused() {
        assertNames(refusal(Route.vllm().option("hold-sconds", "60")), "route r1", "hold-sconds");
        assertNames(refusal(Route.vllm().option("hold-mode", "forever")), "route r1", "hold-mode", "forever");
        assertNames(refusal(Route.vllm().option("hold-seconds", "soon")), "route r1", "hold-seconds", "soon");
        assertNames(refusal(Route.sglang().option("bootstrap-port", "70000")), "route r1", "bootstrap-port");
        assertNames(refusal(Route.trtllm().option("kv-transfer-timeout-ms", "0")), "route r1",
                "kv-transfer-timeout-ms");
    }

    @Test
    void badBypassSettingsAreRefusedWhenParsed() {
        assertNames(assertThrows(IllegalArgumentException.class,
                () -> BypassPolicy.parse("r1", List.of("sometimes"), 0)).getMessage(), "route r1", "bypass.when",
                "sometimes");
        assertNames(assertThrows(IllegalArgumentException.class,
                () -> BypassPolicy.parse("r1", List.of("short-prompt"), 0)).getMessage(), "route r1",
                "bypass.short-prompt-tokens");
        assertNames(assertThrows(IllegalArgumentException.class,
                () -> BypassPolicy.parse("r1", List.of("never", "always"), 0)).getMessage(), "route r1",
                "bypass.when", "never");
    }

    @Test
    void badUncachedPromptSettingsAreRefused() {
        int cache = 262144;
        for (int threshold : new int[] {0, -5}) {
            assertNames(assertThrows(IllegalArgumentException.class, () -> BypassPolicy.parse("r1", List.of("never"),
                    0, OptionalInt.of(threshold), cache)).getMessage(), "route r1", "bypass.uncached-prompt-tokens",
                    Integer.toString(threshold), "at least 1");
        }
        assertNames(assertThrows(IllegalArgumentException.class, () -> BypassPolicy.parse("r1",
                List.of("uncached-prompt"), 0, OptionalInt.empty(), cache)).getMessage(), "route r1", "bypass.when",
                "bypass.uncached-prompt-tokens");

        // the decode cache must hold one block of prefix-affinity.block-tokens (16), whether the trigger is on or not
        BypassPolicy on = BypassPolicy.parse("r1", List.of("never"), 0, OptionalInt.of(64), cache);
        for (int tooSmall : new int[] {15, 0, -1}) {
            assertNames(refusal(Route.vllm().bypass(new BypassPolicy(on.triggers(), 0, 64, tooSmall))), "route r1",
                    "bypass.decode-cache-tokens", Integer.toString(tooSmall), "16");
            assertNames(refusal(Route.vllm().bypass(new BypassPolicy(Set.of(), 0, 0, tooSmall))), "route r1",
                    "bypass.decode-cache-tokens");
        }
        // the trigger on without a threshold (settings built in code)
        assertNames(refusal(Route.vllm().bypass(new BypassPolicy(on.triggers(), 0, 0, cache))), "route r1",
                "bypass.uncached-prompt-tokens", "at least 1");
        // decode endpoints that cannot prefill locally cannot take a bypass, however little is uncached
        assertNames(refusal(Route.sglang().bypass(on)), "route r1", "bypass.uncached-prompt-tokens", "sglang");

        FACTORY.negotiate(Route.vllm().bypass(on).settings());
        FACTORY.negotiate(Route.vllm().bypass(new BypassPolicy(on.triggers(), 0, 64, 16)).settings());
    }
}
