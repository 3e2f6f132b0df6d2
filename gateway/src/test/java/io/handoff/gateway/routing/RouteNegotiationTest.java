package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.session.SessionPolicy;
import io.handoff.openengine.v1.EngineRole;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Negotiation, fail-closed: every kind of route the connectors or the deployment cannot honour is refused at start
 * with a message naming the route, the setting and why; and an endpoint that answers as the wrong role or serves
 * another model is judged unhealthy with a message that says so.
 */
class RouteNegotiationTest {

    private static final SessionPolicy DEPLOYMENT = new SessionPolicy(Duration.ofSeconds(30), Duration.ofHours(1),
            Duration.ofMinutes(10), 1000, ScheduleStyle.CONTEXT_FIRST,
            Set.of(ScheduleStyle.CONTEXT_FIRST, ScheduleStyle.GENERATION_FIRST), true, 256, 65536);

    private final RouteFactory factory = new RouteFactory(RouteRegistry.discoverFamilies(), DEPLOYMENT,
            ProbesAsTheyAre.RUNNER);

    private static RouteSettings route(String family, ScheduleStyle defaultStyle, Set<ScheduleStyle> styles,
            BypassPolicy bypass, Optional<Duration> leaseMax, List<Endpoint> decode, int maxInFlight,
            Map<String, String> options) {
        return RouteSettings.builder("r", "m", family).engineModel("sim-model")
                .prefill(List.of(Endpoint.of("p-0", "http://127.0.0.1:1"))).decode(decode)
                .defaultStyle(defaultStyle).styles(styles).bypass(bypass).leaseMax(leaseMax).decodeAttempts(1)
                .maxInFlight(maxInFlight).options(options).build();
    }

    private static final List<Endpoint> DECODE = List.of(Endpoint.of("d-0", "http://127.0.0.1:2"));
    private static final Map<String, String> VLLM_FIXED = Map.of("hold-mode", "fixed", "hold-seconds", "480");

    private static RouteSettings vllm(Set<ScheduleStyle> styles, BypassPolicy bypass, Optional<Duration> leaseMax) {
        return route("vllm", ScheduleStyle.CONTEXT_FIRST, styles, bypass, leaseMax, DECODE, 16, VLLM_FIXED);
    }

    private void refused(RouteSettings s, String... fragments) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> factory.negotiate(s));
        assertTrue(e.getMessage().startsWith("route r"), e.getMessage());
        for (String fragment : fragments) {
            assertTrue(e.getMessage().contains(fragment), e.getMessage());
        }
    }

    @Test
    void routesTheEnginesCanHonourAreAccepted() {
        factory.negotiate(vllm(Set.of(ScheduleStyle.CONTEXT_FIRST), BypassPolicy.parse("r", List.of("explicit"), 0),
                Optional.empty()));
        factory.negotiate(route("sglang", ScheduleStyle.GENERATION_FIRST, Set.of(ScheduleStyle.GENERATION_FIRST),
                BypassPolicy.NEVER, Optional.empty(), DECODE, 16, Map.of()));
        factory.negotiate(route("trtllm", ScheduleStyle.CONTEXT_FIRST, Set.of(ScheduleStyle.CONTEXT_FIRST,
                ScheduleStyle.GENERATION_FIRST), BypassPolicy.NEVER, Optional.empty(), DECODE, 16,
                Map.of("schedule-styles", "context-first,generation-first")));
    }

    @Test
    void anUnknownFamily() {
        refused(route("tgi", ScheduleStyle.CONTEXT_FIRST, Set.of(ScheduleStyle.CONTEXT_FIRST), BypassPolicy.NEVER,
                Optional.empty(), DECODE, 16, Map.of()), "family", "'tgi' has no connector");
    }

    @Test
    void aStyleTheEngineDoesNotSupportNatively() {
        refused(vllm(Set.of(ScheduleStyle.CONTEXT_FIRST, ScheduleStyle.GENERATION_FIRST), BypassPolicy.NEVER,
                Optional.empty()), "styles", "generation-first is not supported natively by vllm");
    }

    @Test
    void aStyleTheDeploymentDoesNotOffer() {
        refused(route("sglang", ScheduleStyle.CONCURRENT, Set.of(ScheduleStyle.CONCURRENT), BypassPolicy.NEVER,
                Optional.empty(), DECODE, 16, Map.of()), "concurrent is not among handoff.session.supported-styles");
    }

    @Test
    void aDefaultStyleThatIsNotEnabled() {
        refused(route("trtllm", ScheduleStyle.GENERATION_FIRST, Set.of(ScheduleStyle.CONTEXT_FIRST),
                BypassPolicy.NEVER, Optional.empty(), DECODE, 16, Map.of()), "default-style");
    }

    @Test
    void bypassOnDecodeEndpointsThatCannotPrefillLocally() {
        refused(route("sglang", ScheduleStyle.GENERATION_FIRST, Set.of(ScheduleStyle.GENERATION_FIRST),
                BypassPolicy.parse("r", List.of("explicit"), 0), Optional.empty(), DECODE, 16, Map.of()),
                "bypass.when", "cannot prefill locally");
    }

    @Test
    void aLeaseLongerThanTheEngineHoldsParkedKv() {
        refused(vllm(Set.of(ScheduleStyle.CONTEXT_FIRST), BypassPolicy.NEVER, Optional.of(Duration.ofMinutes(10))),
                "lease-max", "longer than vllm holds parked KV");
    }

    @Test
    void aLeaseLongerThanTheDeploymentAllows() {
        refused(route("sglang", ScheduleStyle.GENERATION_FIRST, Set.of(ScheduleStyle.GENERATION_FIRST),
                BypassPolicy.NEVER, Optional.of(Duration.ofHours(2)), DECODE, 16,
                Map.of("bootstrap-timeout-seconds", "9000", "waiting-timeout-seconds", "9000")),
                "lease-max", "handoff.session.max-lease");
    }

    @Test
    void anEmptyPoolOrABulkheadOfZero() {
        refused(route("vllm", ScheduleStyle.CONTEXT_FIRST, Set.of(ScheduleStyle.CONTEXT_FIRST), BypassPolicy.NEVER,
                Optional.empty(), List.of(), 16, VLLM_FIXED), "at least one endpoint");
        refused(route("vllm", ScheduleStyle.CONTEXT_FIRST, Set.of(ScheduleStyle.CONTEXT_FIRST), BypassPolicy.NEVER,
                Optional.empty(), DECODE, 0, VLLM_FIXED), "max-in-flight");
    }

    @Test
    void aNegativeQueueOrAQueueTimeoutOfZero() {
        RouteSettings base = vllm(Set.of(ScheduleStyle.CONTEXT_FIRST), BypassPolicy.NEVER, Optional.empty());
        refused(base.toBuilder().queueMaxWaiting(-1).build(), "queue.max-waiting", "0 (no queue) or more");
        refused(base.toBuilder().queueMaxWaiting(8).queueTimeout(Duration.ZERO).build(), "queue.timeout",
                "above zero");
        factory.negotiate(base.toBuilder().queueMaxWaiting(8).queueTimeout(Duration.ofMillis(1)).build());
    }

    @Test
    void anOptionTheConnectorDoesNotKnow() {
        refused(route("sglang", ScheduleStyle.GENERATION_FIRST, Set.of(ScheduleStyle.GENERATION_FIRST),
                BypassPolicy.NEVER, Optional.empty(), DECODE, 16, Map.of("hold-mode", "fixed")),
                "unknown sglang option 'hold-mode'");
    }

    // ---- what the engines report, judged at every probe

    private static final RouteSettings ROUTE = vllm(Set.of(ScheduleStyle.CONTEXT_FIRST), BypassPolicy.NEVER,
            Optional.empty());

    private static EndpointStatus answered(Optional<EngineRole> role, List<String> models) {
        return new EndpointStatus(Endpoint.of("p-0", "http://127.0.0.1:1"), true, role, models, Optional.empty(),
                Map.of(), "health: HTTP 200");
    }

    @Test
    void anEndpointAnsweringAsTheWrongRoleIsUnhealthyAndSaysSo() {
        EndpointStatus judged = EndpointVerdict.judge(ROUTE, EngineRole.ENGINE_ROLE_PREFILL,
                answered(Optional.of(EngineRole.ENGINE_ROLE_DECODE), List.of("sim-model")));
        assertFalse(judged.healthy());
        assertTrue(judged.detail().startsWith("wrong role: endpoint p-0 answers as DECODE but is in the prefill "
                + "pool of route r, which needs PREFILL"), judged.detail());
        assertEquals(Optional.of("role"), EndpointVerdict.kindOf(judged.detail()));
        assertFalse(EndpointVerdict.judge(ROUTE, EngineRole.ENGINE_ROLE_DECODE,
                answered(Optional.of(EngineRole.ENGINE_ROLE_AGGREGATED), List.of())).healthy());
    }

    @Test
    void anEndpointServingAnotherModelIsUnhealthyAndSaysSo() {
        EndpointStatus judged = EndpointVerdict.judge(ROUTE, EngineRole.ENGINE_ROLE_DECODE,
                answered(Optional.empty(), List.of("other-model")));
        assertFalse(judged.healthy());
        assertTrue(judged.detail().contains("does not serve model 'sim-model' of route r (it serves [other-model])"),
                judged.detail());
        assertEquals(Optional.of("model"), EndpointVerdict.kindOf(judged.detail()));
    }

    @Test
    void whatAnEngineDoesNotReportIsNotHeldAgainstIt() {
        EndpointStatus silent = answered(Optional.empty(), List.of());
        assertSame(silent, EndpointVerdict.judge(ROUTE, EngineRole.ENGINE_ROLE_PREFILL, silent));
        EndpointStatus right = answered(Optional.of(EngineRole.ENGINE_ROLE_PREFILL), List.of("sim-model"));
        assertSame(right, EndpointVerdict.judge(ROUTE, EngineRole.ENGINE_ROLE_PREFILL, right));
    }
}
