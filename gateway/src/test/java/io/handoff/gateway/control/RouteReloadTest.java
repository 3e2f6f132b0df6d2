package io.handoff.gateway.control;

import io.grpc.Status;
import io.handoff.gateway.reaper.Reaper;
import io.handoff.gateway.routing.EndpointSource;
import io.handoff.gateway.routing.PoolMembership;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.routing.RouteReload;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.LogCapture;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.SimFleetTestResource;
import io.handoff.gateway.testing.SpareDecodeEngine;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimEngine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reloading the routes of a serving gateway, against simulated engines: a reload adds, changes and removes routes as
 * a whole new table; a request finishes on the route it started on, whether the reload changed that route (new
 * requests get the new one and its limits) or removed it; a route taken out refuses new requests as an
 * unknown model while its KV still reaches its engine; a reload that any route fails is refused whole and the table
 * serving stays, with the reason in the answer and in the log (an ERROR), and the refusal counted.
 */
@QuarkusTest
@TestProfile(RouteReloadProfile.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RouteReloadTest extends ControlPlaneTest {

    @Inject
    RouteRegistry routes;

    @Inject
    MeterRegistry registry;

    @Inject
    Clock clock;

    @Inject
    SessionService sessions;

    @Inject
    SessionStore store;

    @Inject
    Reaper reaper;

    @Inject
    PoolMembership membership;

    private SpareDecodeEngine spare;
    private SimEngine secondDecode;

    @BeforeAll
    void startASecondDecodeEngine() {
        spare = SpareDecodeEngine.vllm(decode().clock());
        secondDecode = spare.engine();
    }

    @AfterAll
    void stopIt() {
        spare.close();
    }

    /** Every test leaves the routes as the gateway started with them. */
    @AfterEach
    void backToTheBaseline() {
        RouteReload back = routes.reload(text(SimFleetTestResource.routeProperties()), "admin");
        assertFalse(back.refused(), back.reason());
    }

    private static SimEngine prefill() {
        return SimFleetTestResource.engine(Family.VLLM, Role.PREFILL);
    }

    private static SimEngine decode() {
        return SimFleetTestResource.engine(Family.VLLM, Role.DECODE);
    }

    static String text(Map<String, String> properties) {
        return properties.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("\n", "# routes\n", "\n"));
    }

    /** The baseline and a second vLLM route, {@code vllm-2} serving {@code m-vllm-2}, on the same engines. */
    static Map<String, String> withSecondRoute() {
        Map<String, String> c = new LinkedHashMap<>(SimFleetTestResource.routeProperties());
        c.putAll(Map.of(
                "handoff.routes.vllm-2.model", "m-vllm-2",
                "handoff.routes.vllm-2.engine-model", SimFleetTestResource.ENGINE_MODEL,
                "handoff.routes.vllm-2.family", "vllm",
                "handoff.routes.vllm-2.prefill", "p-0=" + prefill().baseUrl(),
                "handoff.routes.vllm-2.decode", "d-0=" + decode().baseUrl(),
                "handoff.routes.vllm-2.options.hold-mode", "fixed",
                "handoff.routes.vllm-2.options.hold-seconds", "480"));
        return c;
    }

    private double reloads(String outcome) {
        Counter counter = registry.find("handoff.routes.reloads").tags("source", "admin", "outcome", outcome)
                .counter();
        return counter == null ? 0 : counter.count();
    }

    private double gauge(String name, String... tags) {
        return registry.get(name).tags(tags).gauge().value();
    }

    @Test
    void aReloadThatAddsARouteServesItAndKeepsTheUnchangedRoutesAsTheyWere() {
        long before = routes.table().generation();
        Route vllm = routes.named("vllm").orElseThrow();
        GenerateCall refused = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm-2", 4);
        assertEquals(Status.Code.NOT_FOUND, refused.awaitEnd().getCode());

        RouteReload reload = routes.reload(text(withSecondRoute()), "admin");

        assertEquals(RouteReload.Outcome.APPLIED, reload.outcome(), reload.reason());
        assertEquals(before + 1, reload.generation());
        assertEquals(List.of("vllm-2"), reload.added());
        assertEquals(reload.generation(), gauge("handoff.routes.generation"));
        assertSame(vllm, routes.named("vllm").orElseThrow(), "an unchanged route is the same route");
        assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm-2", 4)
                .awaitEnd().getCode());
        assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4)
                .awaitEnd().getCode());
        assertEquals(1, gauge("handoff.pool.endpoints", "route", "vllm-2", "pool", "decode", "state", "active"));

        RouteReload again = routes.reload(text(withSecondRoute()), "admin");
        assertEquals(RouteReload.Outcome.UNCHANGED, again.outcome());
        assertEquals(reload.generation(), again.generation(), "the same routes again make no new table");
    }

    @Test
    void aReloadThatChangesAPoolServesTheNewPoolAndKeepsTheStateOfTheEndpointsBothHave() {
        Route old = routes.named("vllm").orElseThrow();
        PooledEndpoint d0 = old.decode().member("d-0").orElseThrow();
        Map<String, String> c = new LinkedHashMap<>(SimFleetTestResource.routeProperties());
        c.put("handoff.routes.vllm.decode", "d-0=" + decode().baseUrl() + ",d-1=" + secondDecode.baseUrl());

        RouteReload reload = routes.reload(text(c), "admin");

        assertEquals(RouteReload.Outcome.APPLIED, reload.outcome(), reload.reason());
        assertEquals(List.of("vllm"), reload.changed());
        Route now = routes.named("vllm").orElseThrow();
        assertNotSame(old, now);
        assertSame(d0, now.decode().member("d-0").orElseThrow(), "d-0 keeps its breaker and its count");
        assertEquals(2, gauge("handoff.pool.endpoints", "route", "vllm", "pool", "decode", "state", "active"),
                "the gauge follows the new pool");
        long secondBefore = secondDecode.stat("requests_total");
        List<GenerateCall> calls = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            calls.add(GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4));
        }
        calls.forEach(call -> assertEquals(Status.Code.OK, call.awaitEnd().getCode()));
        assertTrue(secondDecode.stat("requests_total") > secondBefore, "the new endpoint takes legs");
    }

    @Test
    void anEndpointAddedByHandStaysWithItsRouteWhenAReloadChangesTheRoute() {
        PooledEndpoint added = membership.add("vllm", "decode", "d-9", secondDecode.baseUrl(), EndpointSource.ADMIN)
                .member();
        try {
            Map<String, String> c = new LinkedHashMap<>(SimFleetTestResource.routeProperties());
            c.put("handoff.routes.vllm.max-in-flight", "500");

            assertEquals(List.of("vllm"), routes.reload(text(c), "admin").changed());

            Route now = routes.named("vllm").orElseThrow();
            assertEquals(500, now.settings().maxInFlight());
            assertSame(added, now.decode().member("d-9").orElseThrow());
            assertEquals(List.of("d-0", "d-9"), now.decode().members().stream().map(m -> m.endpoint().name())
                    .toList());
            assertEquals(EndpointSource.ADMIN, added.source());
        } finally {
            membership.retire("vllm", "decode", "d-9");
        }
    }

    @Test
    void aRemovedRouteFinishesItsRunningStreamsRefusesNewOnesAsUnknownAndItsKvStillReachesItsEngine() {
        assertFalse(routes.reload(text(withSecondRoute()), "admin").refused());
        Route second = routes.named("vllm-2").orElseThrow();
        List<GenerateCall> running = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            running.add(GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm-2", 40));
        }
        running.forEach(GenerateCall::awaitFirstToken);

        RouteReload reload = routes.reload(text(SimFleetTestResource.routeProperties()), "admin");

        assertEquals(RouteReload.Outcome.APPLIED, reload.outcome(), reload.reason());
        assertEquals(List.of("vllm-2"), reload.removed());
        assertTrue(routes.retired().contains(second), "kept for what runs on it");
        assertSame(second, routes.forCleanup("vllm-2", "d-0").orElseThrow(), "its KV is discharged through it");
        GenerateCall refused = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm-2", 4);
        assertEquals(Status.Code.NOT_FOUND, refused.awaitEnd().getCode());
        assertEquals("ERROR_CODE_MODEL_NOT_FOUND", refused.errorCode());
        assertTrue(refused.awaitEnd().getDescription().contains("no route serves model 'm-vllm-2'"),
                refused.awaitEnd().getDescription());
        for (GenerateCall call : running) {
            assertEquals(Status.Code.OK, call.awaitEnd().getCode(), "a stream finishes on the route it started on");
            assertEquals(40, call.events().stream().filter(e -> e.hasToken()).count());
        }
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            assertEquals(0, second.inFlight().get());
            assertEquals(0, prefill().stat("kv_blocks_pinned_now"));
            assertEquals(0, decode().stat("kv_blocks_pinned_now"));
        });
        assertFalse(registry.find("handoff.pool.endpoints").tags("route", "vllm-2").gauges().iterator().hasNext(),
                "a removed route's pool gauges go");

        // once nothing runs on it and its engines' KV hold has passed, it is let go
        routes.letGo();
        ((MutableClock) clock).advance(second.capabilities().engineHold());
        routes.letGo();
        assertFalse(routes.retired().contains(second));
        assertTrue(routes.forCleanup("vllm-2", "d-0").isEmpty());
    }

    /**
     * Streams running on a route when a reload changes it (its bulkhead and its decode pool) finish on the route they
     * started on, which drains to nothing in flight, while new requests get the new route and its new limit: the
     * old route's running streams do not count against it, and one request beyond it is refused naming it.
     */
    @Test
    void streamsRunningWhenAReloadChangesTheirRouteFinishOnItWhileNewRequestsGetTheNewSettings() {
        Route old = routes.named("vllm").orElseThrow();
        List<GenerateCall> running = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            running.add(GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 100));
        }
        running.forEach(GenerateCall::awaitFirstToken);
        assertEquals(3, old.inFlight().get());
        Map<String, String> c = new LinkedHashMap<>(SimFleetTestResource.routeProperties());
        c.put("handoff.routes.vllm.max-in-flight", "2");
        c.put("handoff.routes.vllm.decode", "d-0=" + decode().baseUrl() + ",d-1=" + secondDecode.baseUrl());

        RouteReload reload = routes.reload(text(c), "admin");

        assertEquals(RouteReload.Outcome.APPLIED, reload.outcome(), reload.reason());
        assertEquals(List.of("vllm"), reload.changed());
        Route now = routes.named("vllm").orElseThrow();
        assertNotSame(old, now);
        assertTrue(routes.retired().contains(old), "the old route is kept for what runs on it");
        assertEquals(3, old.inFlight().get(), "the running streams stay on the route they started on");
        assertEquals(0, now.inFlight().get());

        // new requests: the new route, its limit of 2 (the old route's 3 streams do not count against it)
        long secondBefore = secondDecode.stat("requests_total");
        List<GenerateCall> fresh = List.of(GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 100),
                GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 100));
        fresh.forEach(GenerateCall::awaitFirstToken);
        assertEquals(2, now.inFlight().get());
        GenerateCall beyond = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4);
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, beyond.awaitEnd().getCode());
        assertEquals("ERROR_CODE_OVERLOADED", beyond.errorCode());
        assertTrue(beyond.awaitEnd().getDescription().contains("route vllm is at its limit of 2 requests in flight"),
                beyond.awaitEnd().getDescription());
        assertEquals(3, old.inFlight().get(), "nothing new went to the old route");

        for (GenerateCall call : running) {
            assertEquals(Status.Code.OK, call.awaitEnd().getCode(), "a stream finishes on the route it started on");
            assertEquals(100, call.events().stream().filter(e -> e.hasToken()).count());
        }
        for (GenerateCall call : fresh) {
            assertEquals(Status.Code.OK, call.awaitEnd().getCode());
        }
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            assertEquals(0, old.inFlight().get(), "the old generation's route drains");
            assertEquals(0, now.inFlight().get());
        });
        assertTrue(secondDecode.stat("requests_total") > secondBefore,
                "the new decode endpoint takes legs (d-0 still counts the old route's legs, so d-1 has fewer)");

        // once nothing runs on it and its engines' KV hold has passed, the old route is let go
        routes.letGo();
        ((MutableClock) clock).advance(old.capabilities().engineHold());
        routes.letGo();
        assertFalse(routes.retired().contains(old));
    }

    @Test
    void aReloadThatOneRouteFailsIsRefusedWholeAndTheTableServingStays() {
        var table = routes.table();
        double refusedBefore = reloads("refused");
        Map<String, String> c = withSecondRoute();
        // vLLM has no concurrent style: negotiation refuses this route, and with it the new vllm-2
        c.put("handoff.routes.vllm.styles", "context-first,concurrent");

        RouteReload reload;
        try (LogCapture log = LogCapture.of(RouteRegistry.class)) {
            reload = routes.reload(text(c), "admin");
            assertEquals(List.of("routes reload (admin) refused, generation " + table.generation()
                    + " keeps serving: " + reload.reason()), log.errors(), "the log says which route and why");
        }

        assertEquals(RouteReload.Outcome.REFUSED, reload.outcome());
        assertEquals(table.generation(), reload.generation(), "the generation serving is the old one");
        assertTrue(reload.reason().startsWith("route vllm: styles: concurrent"), reload.reason());
        assertSame(table, routes.table(), "nothing changed");
        assertTrue(routes.named("vllm-2").isEmpty());
        assertEquals(refusedBefore + 1, reloads("refused"));
        assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4)
                .awaitEnd().getCode());
    }

    @Test
    void textThatCannotBeRoutesIsRefusedByKeyOrNameAndChangesNothing() {
        var table = routes.table();
        Map<String, String> unknownKey = new LinkedHashMap<>(SimFleetTestResource.routeProperties());
        unknownKey.put("handoff.routes.vllm.max-in-flite", "3");
        Map<String, String> foreign = new LinkedHashMap<>(SimFleetTestResource.routeProperties());
        foreign.put("handoff.session.max-lease", "2h");
        Map<String, String> moved = new LinkedHashMap<>(SimFleetTestResource.routeProperties());
        moved.put("handoff.routes.vllm.decode", "d-0=" + secondDecode.baseUrl());
        Map<String, String> twice = withSecondRoute();
        twice.put("handoff.routes.vllm-2.model", "m-vllm");
        Map<String, String> badValue = new LinkedHashMap<>(SimFleetTestResource.routeProperties());
        badValue.put("handoff.routes.vllm.max-in-flight", "many");

        Map<String, String> refusals = new LinkedHashMap<>();
        refusals.put(text(unknownKey), "max-in-flite");
        refusals.put(text(foreign), "handoff.session.max-lease");
        refusals.put(text(moved), "endpoint name 'd-0' already names another engine");
        refusals.put(text(twice), "model name 'm-vllm' is already served by route");
        refusals.put(text(badValue), "max-in-flight");
        refusals.put("", "no route");
        refusals.put("handoff.routes.vllm.model=\\u00", "not a properties text");
        refusals.forEach((body, expected) -> {
            RouteReload reload = routes.reload(body, "admin");
            assertEquals(RouteReload.Outcome.REFUSED, reload.outcome(), body);
            assertTrue(reload.reason().contains(expected), reload.reason());
        });
        assertSame(table, routes.table(), "nothing changed");
    }

    @Test
    void whatARemovedRouteOwesIsStillDischargedThroughItAndNotOnceItIsLetGo() {
        assertFalse(routes.reload(text(withSecondRoute()), "admin").refused());
        Route second = routes.named("vllm-2").orElseThrow();
        OpenEngineKvGrpc.OpenEngineKvBlockingStub kv = GrpcTestClient.withKey(
                OpenEngineKvGrpc.newBlockingStub(client.channel()), ControlPlaneProfile.TEAM_A_KEY);
        String first = heldOn(kv);
        assertFalse(routes.reload(text(SimFleetTestResource.routeProperties()), "admin").refused());

        // the session ends after its route was removed: its KV's discharge still reaches vllm-2's connector
        release(kv, first);
        assertEquals(CleanupObligation.Status.ENGINE_HELD, obligationOf(first).status(),
                "discharged through the retired route (vLLM holds parked KV until its own timer)");

        // once the retired route is let go, an obligation naming it has nowhere to go: retried, then left to the engine
        assertFalse(routes.reload(text(withSecondRoute()), "admin").refused());
        String owedAfterLetGo = heldOn(kv);
        assertFalse(routes.reload(text(SimFleetTestResource.routeProperties()), "admin").refused());
        routes.letGo();
        ((MutableClock) clock).advance(second.capabilities().engineHold());
        routes.letGo();
        assertTrue(routes.retired().isEmpty());
        release(kv, owedAfterLetGo);
        CleanupObligation owed = obligationOf(owedAfterLetGo);
        assertEquals(CleanupObligation.Status.PENDING, owed.status());
        assertTrue(owed.lastError().contains("no route named 'vllm-2'"), owed.lastError());
    }

    /** A caller-allocated session of vllm-2 whose prefill KV is parked on p-0, as a prefill leg records it. */
    private String heldOn(OpenEngineKvGrpc.OpenEngineKvBlockingStub kv) {
        String unique = UUID.randomUUID().toString();
        KvSession s = kv.allocateKvSession(AllocateKvSessionRequest.newBuilder().setRequestId("r-" + unique)
                .setModel("m-vllm-2").setIdempotencyKey("k-" + unique).build());
        String id = s.getRef().getSessionId();
        sessions.recordObligation("team-a", id, CleanupObligation.pending("prefill@p-0", "vllm-2", "p-0",
                "parked-prefill-kv", Map.of(), clock.instant().plus(Duration.ofSeconds(480)), false))
                .await().indefinitely();
        return id;
    }

    private void release(OpenEngineKvGrpc.OpenEngineKvBlockingStub kv, String sessionId) {
        kv.releaseKvSession(ReleaseKvSessionRequest.newBuilder().setSessionId(sessionId).build());
        reaper.sweep().await().atMost(Duration.ofSeconds(30));
    }

    private CleanupObligation obligationOf(String sessionId) {
        return store.find(sessionId).await().atMost(Duration.ofSeconds(10)).orElseThrow().obligations().get(0);
    }
}
