package io.handoff.gateway.control;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.openengine.v1.ControlGrpc;
import io.handoff.openengine.v1.GetModelInfoRequest;
import io.handoff.openengine.v1.GetServerInfoRequest;
import io.handoff.openengine.v1.KvConnectorInfo;
import io.handoff.openengine.v1.ModelInfo;
import io.handoff.openengine.v1.ServerInfo;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GetServerInfo and GetModelInfo over real gRPC for routes of each engine family: the deployment advertises only
 * what every route can do, each model what its own route and engines can do, and never a capability its engine
 * lacks.
 */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class DiscoveryTest extends ControlPlaneTest {

    @Inject
    FleetSampler sampler;

    @BeforeEach
    void sample() {
        sampler.sampleNow().await().indefinitely();
    }

    private ModelInfo model(String name) {
        return control.getModelInfo(GetModelInfoRequest.newBuilder().setModel(name).build());
    }

    private static Struct kv(ModelInfo info) {
        return info.getExtra().getFieldsOrThrow("kv").getStructValue();
    }

    private static List<String> strings(Struct s, String field) {
        return s.getFieldsOrThrow(field).getListValue().getValuesList().stream().map(Value::getStringValue).toList();
    }

    @Test
    void serverInfoAdvertisesOnlyWhatEveryRouteCanDo() {
        ServerInfo info = control.getServerInfo(GetServerInfoRequest.getDefaultInstance());
        KvConnectorInfo kv = info.getKvConnector();
        assertEquals("handoff", info.getEngineName());
        assertTrue(info.getSchemaRevision() > 0);
        assertTrue(info.getSupportedModelsList().containsAll(List.of("m-vllm", "m-sglang", "m-trtllm")));
        // vLLM is context-first only, SGLang has no context-first: no style works for every model
        assertEquals(List.of(), kv.getSupportedScheduleStylesList());
        // SGLang decode endpoints cannot prefill locally, so bypass cannot be promised for every model
        assertTrue(kv.hasSupportsConditionalBypass());
        assertFalse(kv.getSupportsConditionalBypass());
        // vLLM and TensorRT-LLM cannot free parked KV on request
        assertFalse(kv.getSupportsAbortCleanup());
        assertTrue(kv.getSupportsDrain());
        assertTrue(kv.getSupportsCallerAllocation() && kv.getSupportsRenewableLeases()
                && kv.getSupportsExplicitRelease() && kv.getSupportsSessionLookup());
        assertFalse(kv.getSupportsRemotePrefill());
        // the longest lease is capped by the shortest engine hold (vLLM fixed hold of 480 s here)
        assertTrue(kv.getSessionLimits().getMaxLease().getSeconds() <= 480,
                kv.getSessionLimits().getMaxLease().toString());
        assertEquals(600, kv.getSessionLimits().getTombstoneRetention().getSeconds());
        assertEquals(5, info.getExtra().getFieldsOrThrow("routes").getListValue().getValuesCount());
    }

    @Test
    void vllmModelAdvertisesContextFirstAndBypassButNoAbortCleanup() {
        ModelInfo info = model("m-vllm");
        assertEquals("sim-model", info.getModelId());
        assertEquals("m-vllm", info.getServedModelName());
        assertEquals(8192, info.getMaxContextLength(), "max_model_len from vLLM's /v1/models");
        assertTrue(info.getSupportsTextInput() && info.getSupportsTokenIdsInput());
        Struct kv = kv(info);
        assertEquals("vllm", kv.getFieldsOrThrow("family").getStringValue());
        assertEquals(List.of("KV_SCHEDULE_STYLE_CONTEXT_FIRST"), strings(kv, "supported_schedule_styles"));
        assertTrue(kv.getFieldsOrThrow("supports_conditional_bypass").getBoolValue());
        assertFalse(kv.getFieldsOrThrow("supports_abort_cleanup").getBoolValue());
        assertEquals(480, kv.getFieldsOrThrow("max_lease_seconds").getNumberValue());
    }

    @Test
    void sglangModelNeverAdvertisesTheLocalPrefillItsEngineLacks() {
        ModelInfo info = model("m-sglang");
        assertEquals(8192, info.getMaxContextLength(), "context_length from SGLang's /server_info");
        Struct kv = kv(info);
        assertEquals(List.of("KV_SCHEDULE_STYLE_GENERATION_FIRST", "KV_SCHEDULE_STYLE_CONCURRENT"),
                strings(kv, "supported_schedule_styles"));
        assertEquals("KV_SCHEDULE_STYLE_CONCURRENT", kv.getFieldsOrThrow("default_schedule_style").getStringValue());
        assertFalse(kv.getFieldsOrThrow("supports_conditional_bypass").getBoolValue());
        assertTrue(kv.getFieldsOrThrow("supports_abort_cleanup").getBoolValue());
    }

    @Test
    void trtllmModelAdvertisesItsTwoStylesAndNoContextLengthItDoesNotReport() {
        ModelInfo info = model("m-trtllm");
        assertFalse(info.hasMaxContextLength(), "trtllm-serve reports no context length over HTTP");
        Struct kv = kv(info);
        assertEquals(List.of("KV_SCHEDULE_STYLE_CONTEXT_FIRST", "KV_SCHEDULE_STYLE_GENERATION_FIRST"),
                strings(kv, "supported_schedule_styles"));
        // the route does not allow bypass, although its decode endpoints could prefill locally
        assertFalse(kv.getFieldsOrThrow("supports_conditional_bypass").getBoolValue());
        assertFalse(kv.getFieldsOrThrow("supports_abort_cleanup").getBoolValue());
    }

    @Test
    void unknownOrMissingModelIsRefused() {
        StatusRuntimeException unknown = assertThrows(StatusRuntimeException.class, () -> model("no-such-model"));
        assertEquals(Status.Code.NOT_FOUND, unknown.getStatus().getCode());
        StatusRuntimeException missing = assertThrows(StatusRuntimeException.class, () -> model(""));
        assertEquals(Status.Code.INVALID_ARGUMENT, missing.getStatus().getCode());
    }

    @Test
    void metricsShowWhatTheSamplerFound() {
        String metrics = io.restassured.RestAssured.given().baseUri(base.toString()).get("/q/metrics").then()
                .statusCode(200).extract().asString();
        List<String> lines = metrics.lines().toList();
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("handoff_negotiation_mismatches_total{")
                && l.contains("kind=\"role\"") && l.contains("route=\"wrong-role\"")), "role mismatch counted");
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("handoff_endpoint_up{")
                && l.contains("route=\"wrong-model\"") && l.contains("pool=\"decode\"") && l.endsWith(" 0.0")),
                "the wrong-model endpoint is down");
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("handoff_endpoint_up{") && l.contains("route=\"vllm\"")
                && l.endsWith(" 1.0")), "a healthy endpoint is up");
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("handoff_endpoint_load{") && l.contains("route=\"sglang\"")
                && l.contains("figure=\"kv_usage\"")), "native load figures");
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("handoff_sessions_active_kv ")), metrics);
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("handoff_fleet_sample_age_seconds ")), metrics);
    }

    @Test
    void callersNeedAKey() {
        StatusRuntimeException anonymous = assertThrows(StatusRuntimeException.class, () -> ControlGrpc
                .newBlockingStub(client.channel()).getServerInfo(GetServerInfoRequest.getDefaultInstance()));
        assertEquals(Status.Code.UNAUTHENTICATED, anonymous.getStatus().getCode());
    }
}
