package io.handoff.gateway.orchestration;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.ReferenceAnswers;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static io.handoff.gateway.testing.GenerateEvents.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The request id is the idempotency key of a Generate: a second Generate with the id of one that still streams is
 * refused as a duplicate without disturbing it; once the first has ended, the same id runs again with a fresh session.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class GenerateDuplicateTest extends FleetTestSupport {

    private static final Metadata.Key<String> ERROR_CODE = Metadata.Key.of("handoff-error-code",
            Metadata.ASCII_STRING_MARSHALLER);

    @ParameterizedTest
    @ValueSource(strings = {FleetRoutes.VLLM_CONTEXT_FIRST, FleetRoutes.SGLANG_CONCURRENT,
            FleetRoutes.TRTLLM_GENERATION_FIRST})
    void aRequestIdThatStillStreamsIsADuplicateAndRunsAgainOnceEnded(String route) {
        FamilyEngines family = fleet().family(FleetRoutes.FAMILY_OF.get(route));
        String id = requestId("dup");
        GenerateRequest request = request(route, id, 150);
        StreamingGenerate first = start(request);
        first.awaitTokens(1);
        long requestsBefore = fleet().requestsTotal();
        double counted = refusedCount(route, ErrorCode.ERROR_CODE_DUPLICATE_REQUEST, "duplicate-request");

        StatusRuntimeException duplicate = start(request).awaitStatus();

        assertEquals(Status.Code.ALREADY_EXISTS, duplicate.getStatus().getCode(), duplicate.getStatus().toString());
        assertEquals("ERROR_CODE_DUPLICATE_REQUEST", duplicate.getTrailers().get(ERROR_CODE));
        assertEquals(requestsBefore, fleet().requestsTotal(), "the duplicate reached an engine");
        assertEquals(1, sessions.of(id).size(), "the duplicate allocated a session");
        assertEquals(counted + 1, refusedCount(route, ErrorCode.ERROR_CODE_DUPLICATE_REQUEST, "duplicate-request"));

        String expected = ReferenceAnswers.text(family, request.getPrompt(), 150);
        List<GenerateResponse> firstEvents = first.awaitEnd();
        assertFinishedOnce(firstEvents, id, FinishReason.FINISH_REASON_LENGTH);
        assertEquals(expected, text(firstEvents), "the duplicate disturbed the first");

        // at once, as a client retries: the first attempt has ended
        List<GenerateResponse> again = run(request.toBuilder().setStopping(request.getStopping().toBuilder()
                .setMaxTokens(8)).build());
        assertFinishedOnce(again, id, FinishReason.FINISH_REASON_LENGTH);
        awaitAttempts(id, 2);
        List<Session> attempts = sessions.of(id);
        assertNotEquals(attempts.get(0).id(), attempts.get(1).id());
        assertTrue(attempts.stream().allMatch(s -> s.state() == SessionState.COMPLETE), attempts.toString());
        awaitNoKvPinned(family);
    }

    private void awaitAttempts(String id, int n) {
        org.awaitility.Awaitility.await(id + " has " + n + " completed sessions").atMost(StreamingGenerate.WAIT)
                .until(() -> sessions.of(id).stream().filter(s -> s.state() == SessionState.COMPLETE).count() == n);
    }
}
