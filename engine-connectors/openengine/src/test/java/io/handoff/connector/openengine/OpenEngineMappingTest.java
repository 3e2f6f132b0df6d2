package io.handoff.connector.openengine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.Leg;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.connector.testsupport.ProtoJson;
import io.handoff.connector.testsupport.mapping.MappingDocumentContract;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Holds mappings/openengine.mapping.json against what the connector declares and sends, through recording gRPC
 * engines: the shared checks of {@link MappingDocumentContract} (every native field set on the client's request
 * arrives unchanged on both legs, refused ones are refused with nothing sent, gateway-owned ones never reach an
 * engine, the document covers every field of GenerateRequest), plus the ref the decode carries, the styles and
 * capabilities the document states, and the abort.
 *
 * <p>The document lists its fields as {@code {path, disposition, sample}}; a gateway-owned field marked
 * {@code refused} is refused like a refused one.
 */
class OpenEngineMappingTest extends MappingDocumentContract {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private JsonNode mapping;
    private RecordingEngines engines;

    @BeforeEach
    void setUp() throws IOException {
        mapping = new ObjectMapper().readTree(documentText("openengine"));
        engines = new RecordingEngines(Map.of("max-outputs", "2"));
    }

    @AfterEach
    void tearDown() {
        engines.close();
    }

    @Override
    protected Set<String> requestFieldPaths() {
        return RequestFields.allPaths();
    }

    @Override
    protected Set<String> documentedFieldPaths() {
        Set<String> documented = new TreeSet<>();
        mapping.path("fields").forEach(f -> documented.add(f.path("path").asText()));
        return documented;
    }

    @Override
    protected Map<String, JsonNode> fields(Disposition disposition) {
        Map<String, JsonNode> out = new TreeMap<>();
        mapping.path("fields").forEach(f -> {
            if (disposition(f) == disposition) {
                out.put(f.path("path").asText(), f);
            }
        });
        return out;
    }

    private static Disposition disposition(JsonNode field) {
        return switch (field.path("disposition").asText()) {
            case "native" -> Disposition.NATIVE;
            case "refused" -> Disposition.REFUSED;
            case "gateway-owned" -> field.path("refused").asBoolean() ? Disposition.REFUSED : Disposition.GATEWAY;
            default -> throw new IllegalArgumentException("unknown disposition in " + field);
        };
    }

    @Override
    protected ConnectorCapabilities capabilities() {
        return engines.connector.capabilities();
    }

    @Override
    protected int requestsSent() {
        return engines.prefill.generates.size() + engines.decode.generates.size();
    }

    private static GenerateRequest withSample(JsonNode field) {
        GenerateRequest.Builder b = ProtoJson.merge(field.path("sample").toString(), GenerateRequest.newBuilder());
        if (b.getInputCase() == GenerateRequest.InputCase.INPUT_NOT_SET) {
            b.setPrompt("base prompt");
        }
        return b.build();
    }

    /** A field's presence and value at a mapping path, comparable across two requests. */
    static List<Object> at(GenerateRequest r, String path) {
        String[] parts = path.split("\\.");
        Message owner = r;
        FieldDescriptor f = GenerateRequest.getDescriptor().findFieldByName(parts[0]);
        if (parts.length == 2) {
            owner = (Message) r.getField(f);
            f = owner.getDescriptorForType().findFieldByName(parts[1]);
        }
        boolean present = f.isRepeated() ? owner.getRepeatedFieldCount(f) > 0 : owner.hasField(f);
        return List.of(present, owner.getField(f));
    }

    private List<GenerateResponse> runBothLegs(String id, GenerateRequest r) {
        PrefillResult.Ready ready = (PrefillResult.Ready) engines.connector.prefill(engines.plan(id, r)).await()
            .atMost(WAIT);
        return engines.connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT);
    }

    @Override
    protected void assertArrivesAsMapped(String path, JsonNode field) {
        GenerateRequest client = withSample(field);
        String id = client.getRequestId().isEmpty() ? "req-" + path : client.getRequestId();
        int before = engines.prefill.generates.size();
        runBothLegs(id, client);
        GenerateRequest onPrefill = engines.prefill.generates.get(before);
        GenerateRequest onDecode = engines.decode.generates.get(engines.decode.generates.size() - 1);
        assertEquals(at(client, path).get(0), true, path + ": the sample must set the field");
        assertEquals(at(client, path), at(onPrefill, path), path + " on the prefill leg");
        assertEquals(at(client, path), at(onDecode, path), path + " on the decode leg");
    }

    @Override
    protected void assertRefusedBeforeSending(String path, JsonNode field) {
        GenerateRequest client = withSample(field);
        EngineException e = assertThrows(EngineException.class, () -> engines.plan("r", client), path);
        assertFalse(e.sentToEngine());
    }

    @Override
    protected void assertNeverSent(String path, JsonNode field) {
        runBothLegs("r-" + path, withSample(field));
        GenerateRequest onPrefill = engines.prefill.generates.get(engines.prefill.generates.size() - 1);
        GenerateRequest onDecode = engines.decode.generates.get(engines.decode.generates.size() - 1);
        assertEquals(false, at(onPrefill, path).get(0), path);
        assertEquals(false, at(onDecode, path).get(0), path);
    }

    @Test
    void theDecodeCarriesExactlyTheRefTheProducerMintedAndThePrefillNone() {
        runBothLegs("r", GenerateRequest.newBuilder().setPrompt("p").build());
        assertFalse(engines.prefill.generates.get(0).hasKv());
        assertEquals(engines.prefill.minted, engines.decode.generates.get(0).getKv().getSession());
        assertEquals("route-model", engines.prefill.generates.get(0).getModel(), "no model: the route's model");
        assertEquals("r", engines.decode.generates.get(0).getRequestId());
    }

    @Test
    void theStylesAndCapabilitiesAreTheDocumentedOnes() {
        ConnectorCapabilities caps = engines.connector.capabilities();
        Set<ScheduleStyle> nativeStyles = new TreeSet<>();
        mapping.path("styles").fields().forEachRemaining(e -> {
            if ("native".equals(e.getValue().asText())) {
                nativeStyles.add(ScheduleStyle.fromConfigName(e.getKey()));
            }
        });
        assertEquals(nativeStyles, new TreeSet<>(caps.nativeStyles()));
        assertEquals(mapping.path("capabilities").path("abortMode").asText(), caps.abortMode().name());
        assertEquals(mapping.path("capabilities").path("localPrefill").asBoolean(), caps.localPrefill());
        assertEquals(mapping.path("capabilities").path("decodeRenewsHold").asBoolean(), caps.decodeRenewsHold());
    }

    @Test
    void abortIsControlAbortByRequestIdOnTheLegsEndpoint() {
        Handoff h = engines.plan("abort-me", GenerateRequest.newBuilder().setPrompt("p").build());
        engines.connector.abort(h, Leg.PREFILL).await().atMost(WAIT);
        engines.connector.abort(h, Leg.DECODE).await().atMost(WAIT);
        assertEquals("abort-me", engines.prefill.aborts.get(0).getRequestId());
        assertEquals("abort-me", engines.decode.aborts.get(0).getRequestId());
        assertTrue(engines.prefill.generates.isEmpty());
    }
}
