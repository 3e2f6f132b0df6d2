package io.handoff.gateway.api.edge;

import com.google.protobuf.Struct;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.session.AllocateCommand;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.TransferDisposition;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.SimFleetTestResource;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.ControlGrpc;
import io.handoff.openengine.v1.GetServerInfoRequest;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.simulator.EngineStats;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The edge fuzzer: {@value #DEFAULT_INPUTS} generated bad inputs (by default) against both fronts, each refused with
 * a clear error and none changing anything: the store holds as many sessions after as before, the simulated engines
 * received no request, another tenant's session is as it was, the gateway still serves, and its heap after GC is
 * where it started. The run is seeded; the seed is printed, and
 * {@code -Dedge.fuzz.seed=<seed> -Dedge.fuzz.only=<index>} sends one input of a run again.
 */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class EdgeFuzzTest {

    static final int DEFAULT_INPUTS = 10_000;
    /** Inputs before the heap is measured the first time: what the first calls load and pool is not growth. */
    static final int WARM_UP = 500;
    /** Generous: the heap of this JVM (the tests' clients too) after GC may grow by this much over the run. */
    static final long HEAP_GROWTH_BOUND = 64L << 20;

    @TestHTTPResource("/")
    URL base;

    @Inject
    SessionStore store;

    @Inject
    SessionService sessions;

    /** The tests' span exporter keeps every span (ids and models of megabytes among them): emptied before a heap reading. */
    @Inject
    InMemorySpanExporter spans;

    @Test
    void everyBadInputIsRefusedClearlyAndChangesNothing() throws Exception {
        long seed = Long.getLong("edge.fuzz.seed", System.currentTimeMillis());
        int inputs = Integer.getInteger("edge.fuzz.inputs", DEFAULT_INPUTS);
        Optional<Integer> only = Optional.ofNullable(Integer.getInteger("edge.fuzz.only"));
        System.out.printf("edge fuzz: seed %d, %d inputs%s%n", seed, inputs, only.map(i -> ", only #" + i).orElse(""));

        try (GrpcTestClient client = GrpcTestClient.ofGateway()) {
            Session foreign = foreignGenerateSession();
            String foreignRequest = foreign.requestId();
            String foreignKv = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()),
                    ControlPlaneProfile.TEAM_B_KEY).allocateKvSession(AllocateKvSessionRequest.newBuilder()
                            .setRequestId("fz-foreign-" + UUID.randomUUID()).setModel(HttpInputs.MODEL)
                            .setIdempotencyKey("fz-foreign-" + UUID.randomUUID()).build())
                    .getRef().getSessionId();
            Session foreignKvBefore = store.find(foreignKv).await().atMost(Duration.ofSeconds(10)).orElseThrow();

            HttpInputs http = new HttpInputs(ControlPlaneProfile.TEAM_A_KEY, ControlPlaneProfile.TEAM_B_KEY,
                    ControlPlaneProfile.ADMIN_KEY, foreignKv);
            GrpcInputs grpc = new GrpcInputs(ControlPlaneProfile.TEAM_A_KEY, ControlPlaneProfile.TEAM_B_KEY,
                    ControlPlaneProfile.ADMIN_KEY, foreignKv, foreignRequest);
            Refusals refusals = new Refusals(base.toString(), client.channel());

            awaitQuietEngines();
            long sessionsBefore = sessionCount();
            long engineBefore = engineRequests();
            long heapAtStart = usedHeapAfterGc();
            long heapBefore = heapAtStart;
            long started = System.nanoTime();

            Map<String, Integer> byCode = new TreeMap<>();
            Map<String, Integer> byKind = new TreeMap<>();
            Map<String, List<String>> defects = new TreeMap<>();
            int from = only.orElse(0);
            int to = only.map(i -> i + 1).orElse(inputs);
            for (int i = from; i < to; i++) {
                if (i == from + WARM_UP && to - from > 2 * WARM_UP) {
                    heapBefore = usedHeapAfterGc(); // pools, caches and compiled code have settled by now
                }
                Dice dice = new Dice(seed, i);
                BadInput input = dice.chance(0.5) ? http.next(dice) : grpc.next(dice);
                Refusals.Verdict verdict = refusals.judge(input);
                byCode.merge((input instanceof BadInput.Http ? "HTTP " : "gRPC ") + verdict.code(), 1, Integer::sum);
                byKind.merge(input.kind(), 1, Integer::sum);
                if (!verdict.refused()) {
                    defects.computeIfAbsent(input.front() + " " + input.kind() + " -> " + verdict.code(),
                            k -> new ArrayList<>()).add("#" + i + " " + verdict.defect() + "\n      sent "
                                    + input.shown());
                }
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            long heapAfter = usedHeapAfterGc();
            long sessionsAfter = sessionCount();
            long engineAfter = engineRequests();

            System.out.printf("edge fuzz: %d inputs in %.1f s (seed %d)%n", to - from, seconds, seed);
            System.out.println("edge fuzz: answers " + byCode);
            System.out.println("edge fuzz: faults " + byKind);
            System.out.printf("edge fuzz: used heap after GC %d MiB at the start, %d MiB after %d inputs, %d MiB"
                    + " at the end%n", heapAtStart >> 20, heapBefore >> 20, WARM_UP, heapAfter >> 20);
            System.out.printf("edge fuzz: sessions in the store %d before, %d after; engine requests %d before, %d"
                    + " after%n", sessionsBefore, sessionsAfter, engineBefore, engineAfter);
            defects.forEach((what, cases) -> System.out.println("edge fuzz DEFECT " + cases.size() + " x " + what
                    + ", e.g. " + cases.get(0)));

            assertEquals(Map.of(), defects.keySet().stream().collect(Collectors.toMap(k -> k,
                    k -> defects.get(k).size())), "inputs not refused clearly (seed " + seed + ")");
            assertEquals(sessionsBefore, sessionsAfter, "sessions allocated by bad inputs (seed " + seed + ")");
            assertEquals(engineBefore, engineAfter, "engine requests caused by bad inputs (seed " + seed + ")");
            assertEquals(foreignKvBefore, store.find(foreignKv).await().atMost(Duration.ofSeconds(10)).orElseThrow(),
                    "another tenant's session changed");
            assertEquals(foreign, store.find(foreign.id()).await().atMost(Duration.ofSeconds(10)).orElseThrow(),
                    "another tenant's request changed");
            assertTrue(heapAfter - heapBefore < HEAP_GROWTH_BOUND, "used heap after GC grew from "
                    + (heapBefore >> 20) + " MiB to " + (heapAfter >> 20) + " MiB");
            stillServes(client);
        }
    }

    /** Another tenant's Generate session, as Generate allocates one: its request id is what Abort looks for. */
    private Session foreignGenerateSession() {
        String requestId = "fz-foreign-" + UUID.randomUUID();
        return sessions.allocateForGenerate("team-b", new AllocateCommand(requestId, HttpInputs.MODEL, requestId,
                Optional.of(ScheduleStyle.CONTEXT_FIRST), Optional.of(TransferDisposition.REQUIRED), Optional.empty(),
                Struct.getDefaultInstance(), "vllm"), "").await().atMost(Duration.ofSeconds(10)).session();
    }

    private void stillServes(GrpcTestClient client) {
        RestAssured.given().get("/q/health/live").then().statusCode(200);
        ControlGrpc.ControlBlockingStub control = GrpcTestClient.withKey(ControlGrpc.newBlockingStub(
                client.channel()), ControlPlaneProfile.TEAM_A_KEY);
        assertTrue(control.getServerInfo(GetServerInfoRequest.getDefaultInstance()).getSupportedModelsCount() > 0);
    }

    private long sessionCount() {
        return store.countByState().await().atMost(Duration.ofSeconds(30)).values().stream()
                .mapToLong(Long::longValue).sum();
    }

    /**
     * Waits until the engines have received nothing for a second: a test of this profile that ran before may still
     * be discharging what its cancelled requests held, and those aborts must not count against the fuzzer.
     */
    private static void awaitQuietEngines() {
        long[] last = {engineRequests()};
        long[] since = {System.nanoTime()};
        Awaitility.await("the engines quiet").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    long now = engineRequests();
                    if (now != last[0]) {
                        last[0] = now;
                        since[0] = System.nanoTime();
                    }
                    return System.nanoTime() - since[0] > Duration.ofSeconds(1).toNanos();
                });
    }

    /** Every request the simulated engines received: inference and native aborts. */
    private static long engineRequests() {
        return SimFleetTestResource.engines().stream().mapToLong(e -> e.stat(EngineStats.REQUESTS_TOTAL)
                + e.stat(EngineStats.REQUESTS_ABORTED)).sum();
    }

    private long usedHeapAfterGc() {
        spans.reset();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
