package io.handoff.connector.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.handoff.connector.openai.completion.RequestFieldPaths;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Holds {@code mappings/vllm.mapping.json} (the machine-readable part of {@code mappings/vllm.md}) against what the
 * connector does: each mapped field, set alone, lands at its native path in the bodies WireMock captured; each
 * refused field is refused by plan() with nothing sent; the file names every request field there is.
 */
class VllmMappingTest {

    private static final JsonNode MAPPING = load();
    private static final GenerateRequest BASE = GenerateRequest.newBuilder().setPrompt("base prompt").build();

    private WireMockRig rig;

    @BeforeEach
    void start() {
        rig = WireMockRig.fixedHold();
        rig.producerAnswers("length", WireMockRig.PRODUCER_PARAMS);
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
    }

    @AfterEach
    void stop() {
        rig.close();
    }

    private static JsonNode load() {
        try (InputStream in = VllmMappingTest.class.getResourceAsStream("/mappings/vllm.mapping.json")) {
            assertNotNull(in, "mappings/vllm.mapping.json is not on the test classpath (see the pom)");
            return Json.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, JsonNode> fields(String kind) {
        Map<String, JsonNode> out = new java.util.TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = MAPPING.get("fields").fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getValue().has(kind)) {
                out.put(e.getKey(), e.getValue());
            }
        }
        return out;
    }

    private static GenerateRequest request(JsonNode fragment) {
        // a fragment that sets the prompt replaces the base one (they share a oneof); a chat has none
        GenerateRequest.Builder b = fragment.has("prompt") || fragment.has("tokenIds")
                || fragment.path("extra").has("messages") ? GenerateRequest.newBuilder() : BASE.toBuilder();
        try {
            JsonFormat.parser().merge(Json.write(fragment), b);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("bad request fragment " + fragment, e);
        }
        return b.build();
    }

    /** Both legs' bodies for one request: [prefill, decode]. */
    private List<JsonNode> run(GenerateRequest request) {
        rig.prefillEngine.resetRequests();
        rig.decodeEngine.resetRequests();
        Handoff handoff = rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, request, rig.prefill, rig.decode);
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                rig.connector.prefill(handoff).await().atMost(VllmLegsTest.WAIT));
        rig.connector.decode(ready.handoff()).collect().asList().await().atMost(VllmLegsTest.WAIT);
        return List.of(WireMockRig.bodies(rig.prefillEngine).get(0), WireMockRig.bodies(rig.decodeEngine).get(0));
    }

    private static JsonNode at(JsonNode body, String dottedPath) {
        JsonNode node = body;
        for (String part : dottedPath.split("\\.")) {
            node = node.path(part);
        }
        return node;
    }

    private void refusedBeforeSending(JsonNode fragment, String code) {
        GenerateRequest request = request(fragment);
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, request, rig.prefill, rig.decode));
        assertEquals(ErrorCode.valueOf("ERROR_CODE_" + code), e.code(), e.getMessage());
        assertEquals(0, rig.sent(), "nothing may be sent for a refused request");
    }

    @Test
    void theFileNamesEveryRequestField() {
        Set<String> listed = new TreeSet<>();
        MAPPING.get("fields").fieldNames().forEachRemaining(listed::add);
        assertEquals(RequestFieldPaths.all(), listed);
    }

    @Test
    void theFileAgreesWithTheDeclaredCapabilities() {
        assertEquals(fields("native").keySet(), rig.connector.capabilities().requestFields());
        assertEquals(fields("gateway").keySet(), VllmFields.GATEWAY);
        Set<String> extraKeys = new TreeSet<>();
        MAPPING.get("extra_keys").forEach(k -> extraKeys.add(k.asText()));
        assertEquals(VllmFields.EXTRA_KEYS, extraKeys);
    }

    @TestFactory
    Stream<DynamicTest> mappedFieldsLandAtTheirNativePath() {
        return fields("native").entrySet().stream().map(e -> DynamicTest.dynamicTest(e.getKey(), () -> {
            JsonNode entry = e.getValue();
            List<JsonNode> bodies = run(request(entry.get("request")));
            String path = entry.get("native").asText();
            JsonNode expectedPrefill = entry.has("prefill_value") ? entry.get("prefill_value") : entry.get("value");
            assertTrue(Json.equivalent(expectedPrefill, at(bodies.get(0), path)),
                    "prefill " + path + ": expected " + expectedPrefill + " in " + bodies.get(0));
            assertTrue(Json.equivalent(entry.get("value"), at(bodies.get(1), path)),
                    "decode " + path + ": expected " + entry.get("value") + " in " + bodies.get(1));
        }));
    }

    @TestFactory
    Stream<DynamicTest> refusedFieldsAreRefusedBeforeAnythingIsSent() {
        List<DynamicTest> tests = new ArrayList<>();
        fields("refused").forEach((name, entry) -> tests.add(DynamicTest.dynamicTest(name, () -> {
            refusedBeforeSending(entry.get("request"), entry.get("refused").asText());
            // a bypass carries the same fields, so it refuses the same way, before sending
            GenerateRequest request = request(entry.get("request"));
            assertThrows(EngineException.class, () -> rig.connector.decodeLocally("r1", request, rig.decode)
                    .collect().asList().await().atMost(VllmLegsTest.WAIT));
            assertEquals(0, rig.sent());
        })));
        fields("refused_when").forEach((name, entry) -> tests.add(DynamicTest.dynamicTest(name + " (value)",
                () -> refusedBeforeSending(entry.get("refused_when").get("request"),
                        entry.get("refused_when").get("code").asText()))));
        return tests.stream();
    }

    @TestFactory
    Stream<DynamicTest> gatewayFieldsAreNeverSent() {
        return fields("gateway").entrySet().stream().map(e -> DynamicTest.dynamicTest(e.getKey(), () -> {
            List<JsonNode> without = run(BASE);
            List<JsonNode> with = run(request(e.getValue().get("request")));
            assertEquals(without, with);
        }));
    }

    @Test
    void legShapes() {
        List<JsonNode> bodies = run(BASE);
        JsonNode prefillLeg = MAPPING.get("legs").get("prefill");
        prefillLeg.get("set").fields().forEachRemaining(f -> assertTrue(
                Json.equivalent(f.getValue(), bodies.get(0).path(f.getKey())), "prefill " + f.getKey()));
        prefillLeg.get("absent").forEach(k -> assertTrue(bodies.get(0).path(k.asText()).isMissingNode()));
        MAPPING.get("legs").get("decode").get("set").fields().forEachRemaining(f -> assertTrue(
                Json.equivalent(f.getValue(), bodies.get(1).path(f.getKey())), "decode " + f.getKey()));

        rig.decodeEngine.resetRequests();
        rig.connector.decodeLocally("r1", BASE, rig.decode).collect().asList().await().atMost(VllmLegsTest.WAIT);
        JsonNode local = WireMockRig.bodies(rig.decodeEngine).get(0);
        JsonNode localLeg = MAPPING.get("legs").get("local");
        localLeg.get("set").fields().forEachRemaining(f -> assertTrue(
                Json.equivalent(f.getValue(), local.path(f.getKey())), "local " + f.getKey()));
        localLeg.get("absent").forEach(k -> assertTrue(local.path(k.asText()).isMissingNode()));
    }

    @Test
    void theChatKeysAgreeWithTheConnector() {
        Set<String> chatKeys = new TreeSet<>();
        MAPPING.get("chat").get("extra_keys").forEach(k -> chatKeys.add(k.asText()));
        assertEquals(VllmFields.CHAT_EXTRA_KEYS, chatKeys);
        assertTrue(rig.connector.capabilities().inputs().contains(io.handoff.connector.spi.InputKind.CHAT_MESSAGES));
    }

    @TestFactory
    Stream<DynamicTest> chatKeysOutsideTheListAreRefusedBeforeAnythingIsSent() {
        JsonNode chat = MAPPING.get("chat");
        List<DynamicTest> tests = new ArrayList<>();
        chat.get("refused_extra_keys").fields().forEachRemaining(e -> tests.add(DynamicTest.dynamicTest(e.getKey(),
                () -> {
                    com.fasterxml.jackson.databind.node.ObjectNode fragment = chat.get("request").deepCopy();
                    ((com.fasterxml.jackson.databind.node.ObjectNode) fragment.get("extra")).putObject(e.getKey());
                    refusedBeforeSending(fragment, e.getValue().asText());
                })));
        return tests.stream();
    }

    @Test
    void chatLegShapes() {
        rig.producerAnswersChat("length", WireMockRig.PRODUCER_PARAMS);
        rig.consumerStreamsChat(WireMockRig.CHAT_DECODE_STREAM);
        JsonNode chat = MAPPING.get("chat");
        GenerateRequest request = request(chat.get("request"));
        List<JsonNode> bodies = run(request);
        List<String> paths = List.of(WireMockRig.requests(rig.prefillEngine).get(0).getRequest().getUrl(),
                WireMockRig.requests(rig.decodeEngine).get(0).getRequest().getUrl());
        String[] legs = {"prefill", "decode"};
        for (int i = 0; i < 2; i++) {
            JsonNode leg = chat.get("legs").get(legs[i]);
            JsonNode body = bodies.get(i);
            assertEquals(leg.get("path").asText(), paths.get(i), legs[i]);
            leg.get("set").fields().forEachRemaining(f -> assertTrue(Json.equivalent(f.getValue(),
                    body.path(f.getKey())), "chat " + f.getKey() + " in " + body));
            leg.get("absent").forEach(k -> assertTrue(body.path(k.asText()).isMissingNode(), k.asText()));
        }

        rig.decodeEngine.resetRequests();
        rig.connector.decodeLocally("r1", request, rig.decode).collect().asList().await().atMost(VllmLegsTest.WAIT);
        JsonNode leg = chat.get("legs").get("local");
        assertEquals(leg.get("path").asText(), WireMockRig.requests(rig.decodeEngine).get(0).getRequest().getUrl());
        JsonNode local = WireMockRig.bodies(rig.decodeEngine).get(0);
        leg.get("set").fields().forEachRemaining(f -> assertTrue(Json.equivalent(f.getValue(),
                local.path(f.getKey())), "local chat " + f.getKey()));
        leg.get("absent").forEach(k -> assertTrue(local.path(k.asText()).isMissingNode(), k.asText()));
    }
}
