package io.handoff.gateway.orchestration;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.handoff.gateway.api.grpc.GrpcStatuses;
import io.handoff.gateway.api.grpc.ParticipantMetadata;
import io.handoff.gateway.control.Drain;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.KvSessionState;
import io.handoff.openengine.v1.KvTransferDisposition;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.StoppingOptions;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Participant mode on the embedded demo fleet: a framework allocates through OpenEngineKv and sends each leg as a
 * Generate naming it in our metadata; the gateway checks the session before any engine is touched and moves it as
 * the legs progress.
 */
@QuarkusTest
class ParticipantModeTest {

    @TestHTTPResource("/")
    URL base;

    @Inject
    Drain drain;

    @Inject
    MeterRegistry registry;

    private GrpcTestClient client;
    private OpenEngineKvGrpc.OpenEngineKvBlockingStub kv;

    @BeforeEach
    void connect() {
        client = GrpcTestClient.ofGateway();
        kv = OpenEngineKvGrpc.newBlockingStub(client.channel());
    }

    @AfterEach
    void close() throws InterruptedException {
        client.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"demo-vllm", "demo-trtllm"})
    void aFrameworkDrivesBothLegsOfAContextFirstSession(String model) {
        KvSession session = allocate(model);
        assertEquals(KvSessionState.KV_SESSION_STATE_ALLOCATED, session.getState());

        List<GenerateResponse> prefill = generate(leg("prefill", session.getRef().getSessionId()),
                request(model, "p-" + model));
        assertEquals(1, prefill.size(), prefill.toString());
        KvSessionRef ref = prefill.get(0).getPrefillReady().getKvSession();
        assertEquals(session.getRef().getSessionId(), ref.getSessionId());
        assertEquals(KvSessionState.KV_SESSION_STATE_READY, get(ref.getSessionId()).getState());

        List<GenerateResponse> decode = generate(leg("decode", null), request(model, "d-" + model).toBuilder()
                .setKv(KvOptions.newBuilder().setSession(ref)).build());
        assertTrue(decode.get(decode.size() - 1).hasFinished(), decode.toString());
        assertEquals(orchestratedText(model), text(decode));
        assertEquals(KvSessionState.KV_SESSION_STATE_COMPLETE, get(ref.getSessionId()).getState());
    }

    @Test
    void aLegOnASessionInTheWrongStateIsRefusedBeforeAnyEngine() {
        KvSession session = allocate("demo-vllm");
        String id = session.getRef().getSessionId();
        KvSessionRef ref = generate(leg("prefill", id), request("demo-vllm", "p1")).get(0).getPrefillReady()
                .getKvSession();

        StatusRuntimeException again = refused(Status.Code.NOT_FOUND,
                () -> generate(leg("prefill", id), request("demo-vllm", "p2")));
        assertEquals("ERROR_CODE_KV_SESSION_NOT_FOUND", again.getTrailers().get(Metadata.Key.of(
                GrpcStatuses.ERROR_CODE_TRAILER, Metadata.ASCII_STRING_MARSHALLER)));

        KvSessionRef stale = ref.toBuilder().setAttributesStruct(ref.getAttributesStruct().toBuilder()
                .putFields("handoff", com.google.protobuf.Value.newBuilder().setStructValue(ref.getAttributesStruct()
                        .getFieldsOrThrow("handoff").getStructValue().toBuilder().putFields("epoch",
                                com.google.protobuf.Value.newBuilder().setStringValue("1").build())).build()))
                .build();
        StatusRuntimeException staleRef = refused(Status.Code.NOT_FOUND, () -> generate(leg("decode", null),
                request("demo-vllm", "d1").toBuilder().setKv(KvOptions.newBuilder().setSession(stale)).build()));
        assertTrue(staleRef.getStatus().getDescription().contains("epoch"), staleRef.getStatus().toString());
        assertEquals(KvSessionState.KV_SESSION_STATE_READY, get(id).getState(), "a refused leg changes nothing");

        refused(Status.Code.INVALID_ARGUMENT, () -> generate(leg("decode", null), request("demo-trtllm", "d2")
                .toBuilder().setKv(KvOptions.newBuilder().setSession(ref)).build()));
    }

    @Test
    void aDecodeWithoutASessionRunsOnlyAsAnExplicitBypassOnARouteThatPrefillsLocally() {
        GenerateRequest bypass = request("demo-vllm", "b1").toBuilder().setKv(KvOptions.newBuilder()
                .setTransferDisposition(KvTransferDisposition.KV_TRANSFER_DISPOSITION_BYPASS)).build();
        assertEquals(orchestratedText("demo-vllm"), text(generate(leg("decode", null), bypass)));

        refused(Status.Code.INVALID_ARGUMENT, () -> generate(leg("decode", null), request("demo-vllm", "b2")));
        refused(Status.Code.FAILED_PRECONDITION, () -> generate(leg("decode", null), request("demo-sglang", "b3")));
    }

    /**
     * A drain refuses new work: a participant's decode that bypasses is new work and is refused DRAINING, as an
     * orchestrated Generate is. The legs of a session allocated before the drain are running work and go on.
     */
    @Test
    void aDrainLetsTheLegsOfAnExistingSessionFinishAndRefusesNewWork() {
        KvSession session = allocate("demo-vllm");
        double drained = refusedCount("demo-vllm", "ERROR_CODE_DRAINING", "deployment-draining");
        drain.begin().await().atMost(Duration.ofSeconds(10));
        try {
            StatusRuntimeException orchestrated = refused(Status.Code.UNAVAILABLE,
                    () -> generate(null, request("demo-vllm", "drained")));
            assertEquals("ERROR_CODE_DRAINING", errorCode(orchestrated));
            GenerateRequest bypass = request("demo-vllm", "drained-bypass").toBuilder().setKv(KvOptions.newBuilder()
                    .setTransferDisposition(KvTransferDisposition.KV_TRANSFER_DISPOSITION_BYPASS)).build();
            assertEquals("ERROR_CODE_DRAINING", errorCode(refused(Status.Code.UNAVAILABLE,
                    () -> generate(leg("decode", null), bypass))));
            // the deployment's drain, told apart from this replica stopping (the same code) by the reason
            assertEquals(drained + 2, refusedCount("demo-vllm", "ERROR_CODE_DRAINING", "deployment-draining"));

            KvSessionRef ref = generate(leg("prefill", session.getRef().getSessionId()),
                    request("demo-vllm", "drain-p")).get(0).getPrefillReady().getKvSession();
            List<GenerateResponse> decode = generate(leg("decode", null), request("demo-vllm", "drain-d")
                    .toBuilder().setKv(KvOptions.newBuilder().setSession(ref)).build());
            assertTrue(decode.get(decode.size() - 1).hasFinished(), decode.toString());
            assertEquals(KvSessionState.KV_SESSION_STATE_COMPLETE, get(ref.getSessionId()).getState());
        } finally {
            drain.end().await().atMost(Duration.ofSeconds(10));
        }
    }

    /** Every entry point records its refusals the same way: one count per route, code and reason. */
    @Test
    void everyRefusalIsCountedWhateverTheEntryPoint() {
        double unknownModel = refusedCount("none", "ERROR_CODE_MODEL_NOT_FOUND", "unknown-model");
        double participant = refusedCount("demo-vllm", "ERROR_CODE_KV_SESSION_NOT_FOUND", "session-not-found");
        refused(Status.Code.NOT_FOUND, () -> generate(null, request("no-such-model", "unknown")));
        refused(Status.Code.NOT_FOUND, () -> generate(leg("prefill", "0123456789abcdef0123456789abcdef"),
                request("demo-vllm", "no-session")));
        assertEquals(unknownModel + 1, refusedCount("none", "ERROR_CODE_MODEL_NOT_FOUND", "unknown-model"));
        assertEquals(participant + 1, refusedCount("demo-vllm", "ERROR_CODE_KV_SESSION_NOT_FOUND",
                "session-not-found"));
    }

    private double refusedCount(String route, String code, String reason) {
        Counter counter = registry.find("handoff.generate.refused").tag("route", route).tag("code", code)
                .tag("reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }

    private static String errorCode(StatusRuntimeException e) {
        return e.getTrailers().get(Metadata.Key.of(GrpcStatuses.ERROR_CODE_TRAILER, Metadata.ASCII_STRING_MARSHALLER));
    }

    @Test
    void malformedLegMetadataIsInvalid() {
        refused(Status.Code.INVALID_ARGUMENT, () -> generate(leg("both", null), request("demo-vllm", "m1")));
        refused(Status.Code.INVALID_ARGUMENT, () -> generate(leg("prefill", null), request("demo-vllm", "m2")));
    }

    private KvSession allocate(String model) {
        return kv.allocateKvSession(AllocateKvSessionRequest.newBuilder().setRequestId("fw-" + UUID.randomUUID())
                .setModel(model).setIdempotencyKey(UUID.randomUUID().toString())
                .setScheduleStyle(KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST).build());
    }

    private KvSession get(String id) {
        return kv.getKvSession(GetKvSessionRequest.newBuilder().setSessionId(id).build());
    }

    private static GenerateRequest request(String model, String requestId) {
        return GenerateRequest.newBuilder().setRequestId(requestId + "-" + UUID.randomUUID()).setModel(model)
                .setPrompt("Handoffs between engines").setStopping(StoppingOptions.newBuilder().setMaxTokens(6))
                .build();
    }

    private static Metadata leg(String leg, String sessionId) {
        Metadata m = new Metadata();
        m.put(Metadata.Key.of(ParticipantMetadata.LEG, Metadata.ASCII_STRING_MARSHALLER), leg);
        if (sessionId != null) {
            m.put(Metadata.Key.of(ParticipantMetadata.SESSION, Metadata.ASCII_STRING_MARSHALLER), sessionId);
        }
        return m;
    }

    private List<GenerateResponse> generate(Metadata metadata, GenerateRequest request) {
        var stub = InferenceGrpc.newBlockingStub(client.channel())
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(metadata == null ? new Metadata()
                        : metadata));
        List<GenerateResponse> events = new ArrayList<>();
        stub.generate(request).forEachRemaining(events::add);
        return events;
    }

    private String orchestratedText(String model) {
        return text(generate(null, request(model, "o")));
    }

    private static String text(List<GenerateResponse> events) {
        StringBuilder sb = new StringBuilder();
        events.forEach(e -> sb.append(e.getToken().getText()));
        return sb.toString();
    }

    private static StatusRuntimeException refused(Status.Code code, Runnable call) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call::run);
        assertEquals(code, e.getStatus().getCode(), e.getStatus().toString());
        return e;
    }
}
