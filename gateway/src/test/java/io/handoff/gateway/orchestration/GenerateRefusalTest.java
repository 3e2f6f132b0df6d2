package io.handoff.gateway.orchestration;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.KvTransferDisposition;
import io.handoff.openengine.v1.SamplingParams;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Generates refused before acceptance: the gRPC status closest to the OpenEngine error code, the code and the
 * retryable flag in the trailers, no session allocated and no engine contacted.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class GenerateRefusalTest extends FleetTestSupport {

    private static final Metadata.Key<String> ERROR_CODE = Metadata.Key.of("handoff-error-code",
            Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> RETRYABLE = Metadata.Key.of("handoff-retryable",
            Metadata.ASCII_STRING_MARSHALLER);

    private StatusRuntimeException assertRefused(GenerateRequest request, Status.Code status, ErrorCode code,
            String reason) {
        // the route is named as the model it serves; none when no route serves it
        String route = request.getModel().isEmpty() || code == ErrorCode.ERROR_CODE_MODEL_NOT_FOUND ? "none"
                : request.getModel();
        double counted = refusedCount(route, code, reason);
        long sessionsBefore = sessions.count();
        long requestsBefore = fleet().requestsTotal();

        StatusRuntimeException refused = start(request).awaitStatus();

        assertEquals(status, refused.getStatus().getCode(), refused.getStatus().toString());
        assertEquals(code.name(), refused.getTrailers().get(ERROR_CODE));
        assertEquals("false", refused.getTrailers().get(RETRYABLE));
        assertEquals(sessionsBefore, sessions.count(), "a refused Generate allocated a session");
        if (!request.getRequestId().isEmpty()) {
            assertTrue(sessions.of(request.getRequestId()).isEmpty());
        }
        assertEquals(requestsBefore, fleet().requestsTotal(), "a refused Generate reached an engine");
        assertEquals(counted + 1, refusedCount(route, code, reason), "one refusal counted, for its reason");
        return refused;
    }

    private static GenerateRequest withStyle(String route, KvScheduleStyle style) {
        return request(route, requestId("style"), 8).toBuilder()
                .setKv(KvOptions.newBuilder().setScheduleStyle(style)).build();
    }

    @Test
    void aStyleTheRouteDoesNotEnableIsUnsupported() {
        StatusRuntimeException refused = assertRefused(withStyle(FleetRoutes.VLLM_CONTEXT_FIRST,
                KvScheduleStyle.KV_SCHEDULE_STYLE_GENERATION_FIRST), Status.Code.FAILED_PRECONDITION,
                ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, "unsupported");
        assertTrue(refused.getStatus().getDescription().contains("generation-first"),
                refused.getStatus().getDescription());
        assertRefused(withStyle(FleetRoutes.TRTLLM_CONTEXT_FIRST, KvScheduleStyle.KV_SCHEDULE_STYLE_CONCURRENT),
                Status.Code.FAILED_PRECONDITION, ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, "unsupported");
        assertRefused(withStyle(FleetRoutes.SGLANG_CONCURRENT, KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST),
                Status.Code.FAILED_PRECONDITION, ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, "unsupported");
    }

    @Test
    void aFieldTheEngineCannotCarryIsUnsupported() {
        GenerateRequest request = request(FleetRoutes.VLLM_CONTEXT_FIRST, requestId("field"), 8).toBuilder()
                .setKv(KvOptions.newBuilder().setBypassPrefixCache(true)).build();
        assertRefused(request,
                Status.Code.FAILED_PRECONDITION, ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, "unsupported");
        GenerateRequest twoOutputs = request(FleetRoutes.SGLANG_CONCURRENT, requestId("n"), 8).toBuilder()
                .setSampling(SamplingParams.newBuilder().setNumSequences(2)).build();
        assertRefused(twoOutputs,
                Status.Code.FAILED_PRECONDITION, ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, "unsupported");
    }

    @Test
    void bypassOnARouteThatDoesNotAllowItIsUnsupported() {
        GenerateRequest request = request(FleetRoutes.VLLM_CONTEXT_FIRST, requestId("bypass"), 8).toBuilder()
                .setKv(KvOptions.newBuilder().setTransferDisposition(
                        KvTransferDisposition.KV_TRANSFER_DISPOSITION_BYPASS)).build();
        assertRefused(request,
                Status.Code.FAILED_PRECONDITION, ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, "unsupported");
    }

    @Test
    void aMissingRequestIdIsInvalid() {
        assertRefused(request(FleetRoutes.VLLM_CONTEXT_FIRST, "", 8), Status.Code.INVALID_ARGUMENT,
                ErrorCode.ERROR_CODE_INVALID_ARGUMENT, "invalid-request");
    }

    @Test
    void aMissingPromptIsInvalid() {
        GenerateRequest request = request(FleetRoutes.SGLANG_CONCURRENT, requestId("no-prompt"), 8).toBuilder()
                .clearInput().build();
        assertRefused(request, Status.Code.INVALID_ARGUMENT, ErrorCode.ERROR_CODE_INVALID_ARGUMENT, "invalid-request");
    }

    @Test
    void aMissingModelIsInvalid() {
        GenerateRequest request = request(FleetRoutes.VLLM_CONTEXT_FIRST, requestId("no-model"), 8).toBuilder()
                .clearModel().build();
        assertRefused(request, Status.Code.INVALID_ARGUMENT, ErrorCode.ERROR_CODE_INVALID_ARGUMENT, "invalid-request");
    }

    @Test
    void anUnknownModelIsNotFound() {
        assertRefused(request("no-such-model", requestId("unknown"), 8), Status.Code.NOT_FOUND,
                ErrorCode.ERROR_CODE_MODEL_NOT_FOUND, "unknown-model");
    }

    @Test
    void aKvSessionOnAnOrchestratedGenerateIsInvalid() {
        GenerateRequest request = request(FleetRoutes.TRTLLM_CONTEXT_FIRST, requestId("kv-session"), 8).toBuilder()
                .setKv(KvOptions.newBuilder().setSession(KvSessionRef.newBuilder().setSessionId("abc"))).build();
        assertRefused(request, Status.Code.INVALID_ARGUMENT, ErrorCode.ERROR_CODE_INVALID_ARGUMENT, "invalid-request");
    }
}
