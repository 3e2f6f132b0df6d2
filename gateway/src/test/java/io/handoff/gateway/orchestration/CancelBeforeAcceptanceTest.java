package io.handoff.gateway.orchestration;

import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.MetadataUtils;
import io.handoff.gateway.api.grpc.ParticipantMetadata;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.RedisTestResource;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client that goes away while its Generate is being admitted (the session store is slow to allocate): what
 * admission took (the request id on this replica, the route's bulkhead place, the endpoints) is given back, so the
 * route keeps serving; and the session the store allocates anyway is ended, so the request id runs again at once.
 * The same for a participant's leg whose session is being looked up.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class CancelBeforeAcceptanceTest extends FleetTestSupport {

    @Inject
    LiveRequests live;

    @Inject
    RouteRegistry routes;

    @Test
    void aCancelDuringAdmissionGivesBackWhatAdmissionTook() {
        Route route = routes.named(FleetRoutes.VLLM_CONTEXT_FIRST).orElseThrow();
        String id = requestId("cancel-admission");
        long engineRequests = fleet().requestsTotal();

        // the store answers no write until unpaused: the allocation of the session waits
        assertEquals("+OK", RedisTestResource.server().command("CLIENT PAUSE 10000 WRITE"));
        StreamingGenerate call;
        try {
            call = start(request(FleetRoutes.VLLM_CONTEXT_FIRST, id, 8));
            Awaitility.await("the request id is claimed").atMost(StreamingGenerate.WAIT)
                    .until(() -> !live.find(SimulatedFleetProfile.TENANT, id).isEmpty());
            assertEquals(1, route.inFlight().get());
            call.cancel();
            assertEquals(Status.Code.CANCELLED, call.awaitStatus().getStatus().getCode());
            awaitCancelSeenDuringAdmission(route, id);
        } finally {
            RedisTestResource.server().command("CLIENT UNPAUSE");
        }

        Awaitility.await("admission gave back what it took").atMost(StreamingGenerate.WAIT).until(() ->
                live.find(SimulatedFleetProfile.TENANT, id).isEmpty() && route.inFlight().get() == 0
                        && route.prefill().member("prefill-0").orElseThrow().outstanding() == 0
                        && route.decode().member("decode-0").orElseThrow().outstanding() == 0);
        assertEquals(engineRequests, fleet().requestsTotal(), "no engine was contacted");

        // the session the store allocated after the client left is ended: the request id runs again at once
        Session abandoned = sessions.awaitOne(id, "ended", Session::isTerminal);
        assertEquals(SessionState.CANCELLED, abandoned.state(), abandoned.terminalReason());
        assertFinishedOnce(run(request(FleetRoutes.VLLM_CONTEXT_FIRST, id, 8)), id, FinishReason.FINISH_REASON_LENGTH);
        assertEquals(2, sessions.of(id).size());
    }

    @Test
    void aCancelDuringAParticipantsSessionLookupGivesBackWhatAdmissionTook() {
        Route route = routes.named(FleetRoutes.VLLM_CONTEXT_FIRST).orElseThrow();
        KvSession session = OpenEngineKvGrpc.newBlockingStub(client.channel()).allocateKvSession(
                AllocateKvSessionRequest.newBuilder().setRequestId("fw-" + UUID.randomUUID())
                        .setModel(FleetRoutes.VLLM_CONTEXT_FIRST).setIdempotencyKey(UUID.randomUUID().toString())
                        .setScheduleStyle(KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST).build());
        String id = requestId("cancel-lookup");
        long engineRequests = fleet().requestsTotal();

        // the store answers nothing, reads included, until thawed: the leg's session lookup waits
        RedisTestResource.server().freeze();
        StreamingGenerate call;
        try {
            call = StreamingGenerate.start(prefillLeg(session), request(FleetRoutes.VLLM_CONTEXT_FIRST, id, 8));
            Awaitility.await("the request id is claimed").atMost(StreamingGenerate.WAIT)
                    .until(() -> !live.find(SimulatedFleetProfile.TENANT, id).isEmpty());
            assertEquals(1, route.inFlight().get());
            assertEquals(1, route.prefill().member("prefill-0").orElseThrow().outstanding());
            call.cancel();
            assertEquals(Status.Code.CANCELLED, call.awaitStatus().getStatus().getCode());
            awaitCancelSeenDuringAdmission(route, id);
        } finally {
            RedisTestResource.server().thaw();
        }

        Awaitility.await("admission gave back what it took").atMost(StreamingGenerate.WAIT).until(() ->
                live.find(SimulatedFleetProfile.TENANT, id).isEmpty() && route.inFlight().get() == 0
                        && route.prefill().member("prefill-0").orElseThrow().outstanding() == 0);
        assertEquals(engineRequests, fleet().requestsTotal(), "no engine was contacted");

        // the session is as the framework left it: its prefill leg runs under the same request id
        List<GenerateResponse> prefill = StreamingGenerate.run(prefillLeg(session),
                request(FleetRoutes.VLLM_CONTEXT_FIRST, id, 8));
        GenerateResponse ready = prefill.get(prefill.size() - 1);
        assertTrue(ready.hasPrefillReady(), prefill.toString());
        assertEquals(0, route.inFlight().get());

        // and its decode leg takes the KV, so no hold outlives the test
        GenerateRequest decode = request(FleetRoutes.VLLM_CONTEXT_FIRST, requestId("cancel-lookup-decode"), 8)
                .toBuilder().setKv(KvOptions.newBuilder().setSession(ready.getPrefillReady().getKvSession())).build();
        List<GenerateResponse> decoded = StreamingGenerate.run(leg("decode", null), decode);
        assertTrue(decoded.get(decoded.size() - 1).hasFinished(), decoded.toString());
        awaitNoKvPinned(fleet().vllm());
    }

    /**
     * The client sees its cancel at once; the gateway sees it when the stream's reset arrives. Waiting for what the
     * gateway does on it (the request id and the route's place given back) while the store still holds the admission
     * makes the cancel one during admission: were the store let go first, the admission could finish before the
     * reset arrived, and the request would be accepted and aborted, a different case.
     */
    private void awaitCancelSeenDuringAdmission(Route route, String id) {
        Awaitility.await("the gateway saw the cancel during admission").atMost(StreamingGenerate.WAIT).until(() ->
                live.find(SimulatedFleetProfile.TENANT, id).isEmpty() && route.inFlight().get() == 0);
    }

    /** The client's channel sending a participant's prefill leg on {@code session}. */
    private Channel prefillLeg(KvSession session) {
        return leg("prefill", session.getRef().getSessionId());
    }

    /** The client's channel sending a participant's {@code leg}, on {@code sessionId} when not null. */
    private Channel leg(String leg, String sessionId) {
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of(ParticipantMetadata.LEG, Metadata.ASCII_STRING_MARSHALLER), leg);
        if (sessionId != null) {
            headers.put(Metadata.Key.of(ParticipantMetadata.SESSION, Metadata.ASCII_STRING_MARSHALLER), sessionId);
        }
        return ClientInterceptors.intercept(client.channel(), MetadataUtils.newAttachHeadersInterceptor(headers));
    }
}
