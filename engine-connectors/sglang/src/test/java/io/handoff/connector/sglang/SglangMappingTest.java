package io.handoff.connector.sglang;

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
 * Holds {@code mappings/sglang.mapping.json} (the machine-readable part of {@code mappings/sglang.md}) against what the
 * connector does: each mapped field, set alone, lands at its native path in the bodies WireMock captured; each
 * refused field is refused by plan() with nothing sent; the file names every request field there is.
 */
class SglangMappingTest {

    private static final JsonNode MAPPING = load();
    private static final GenerateRequest BASE = GenerateRequest.newBuilder().setPrompt("base prompt").build();

    private WireMockRig rig;

    @BeforeEach
    void start() {
        rig = WireMockRig.standard();
        rig.producerAnswers(WireMockRig.PREFILL_ANSWER);
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
    }

    @AfterEach
    void stop() {
        rig.close();
    }

    private static JsonNode load() {
        try (InputStream in = SglangMappingTest.class.getResourceAsStream("/mappings/sglang.mapping.json")) {
            assertNotNull(in, "mappings/sglang.mapping.json is not on the test classpath (see the pom)");
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

    /** Both legs' bodies for one request: [prefill, decode], without the minted identities. */
    private List<JsonNode> run(GenerateRequest request) throws Exception {
        rig.prefillEngine.resetRequests();
        rig.decodeEngine.resetRequests();
        Handoff handoff = rig.connector.plan("r1", ScheduleStyle.CONCURRENT, request, rig.prefill, rig.decode);
        WireMockRig.Run run = rig.run(handoff);
        assertInstanceOf(PrefillResult.Ready.class, run.prefillResult());
        run.events();
        String path = io.handoff.connector.openai.completion.ChatRequests.path(request);
        return List.of(withoutIds(WireMockRig.bodies(rig.prefillEngine, path).get(0)),
                withoutIds(WireMockRig.bodies(rig.decodeEngine, path).get(0)));
    }

    private static JsonNode withoutIds(JsonNode body) {
        com.fasterxml.jackson.databind.node.ObjectNode copy = ((com.fasterxml.jackson.databind.node.ObjectNode) body)
                .deepCopy();
        copy.remove(List.of("rid", "bootstrap_room"));
        return copy;
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
                () -> rig.connector.plan("r1", ScheduleStyle.CONCURRENT, request, rig.prefill, rig.decode));
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
        assertEquals(fields("gateway").keySet(), SglangFields.GATEWAY);
        Set<String> extraKeys = new TreeSet<>();
        MAPPING.get("extra_keys").forEach(k -> extraKeys.add(k.asText()));
        assertEquals(SglangFields.EXTRA_KEYS, extraKeys);
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
                    .collect().asList().await().atMost(WireMockRig.WAIT));
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
    void legShapes() throws Exception {
        List<JsonNode> bodies = run(BASE);
        for (String leg : List.of("prefill", "decode")) {
            JsonNode body = bodies.get(leg.equals("prefill") ? 0 : 1);
            JsonNode shape = MAPPING.get("legs").get(leg);
            shape.get("set").fields().forEachRemaining(f -> assertTrue(
                    Json.equivalent(f.getValue(), body.path(f.getKey())), leg + " " + f.getKey() + " in " + body));
            shape.path("absent").forEach(k -> assertTrue(body.path(k.asText()).isMissingNode(), leg + " " + k));
            assertEquals("127.0.0.1", body.path("bootstrap_host").asText(), leg);
            assertEquals(9100, body.path("bootstrap_port").asInt(), leg);
        }
        assertEquals(MAPPING.get("legs").get("abort").get("path").asText(), SglangEngineConnector.ABORT_PATH);
    }

    @Test
    void theStylesAgreeWithTheDeclaredCapabilities() {
        MAPPING.get("styles").fields().forEachRemaining(e -> {
            if (e.getKey().equals("bypass")) {
                assertEquals(e.getValue().asText().equals("native"), rig.connector.capabilities().localPrefill());
                return;
            }
            ScheduleStyle style = ScheduleStyle.fromConfigName(e.getKey());
            assertEquals(e.getValue().asText().equals("native"),
                    rig.connector.capabilities().nativeStyles().contains(style), e.getKey());
        });
    }

    @Test
    void theChatKeysAgreeWithTheConnector() {
        java.util.Set<String> chatKeys = new java.util.TreeSet<>();
        MAPPING.get("chat").get("extra_keys").forEach(k -> chatKeys.add(k.asText()));
        assertEquals(SglangFields.CHAT_EXTRA_KEYS, chatKeys);
        assertTrue(rig.connector.capabilities().inputs().contains(io.handoff.connector.spi.InputKind.CHAT_MESSAGES));
    }

    @org.junit.jupiter.api.TestFactory
    java.util.stream.Stream<org.junit.jupiter.api.DynamicTest> chatKeysOutsideTheListAreRefused() {
        JsonNode chat = MAPPING.get("chat");
        List<org.junit.jupiter.api.DynamicTest> tests = new java.util.ArrayList<>();
        chat.get("refused").fields().forEachRemaining(e -> tests.add(org.junit.jupiter.api.DynamicTest.dynamicTest(
                e.getKey(), () -> {
                    com.fasterxml.jackson.databind.node.ObjectNode fragment = chat.get("request").deepCopy();
                    fragment.setAll((com.fasterxml.jackson.databind.node.ObjectNode) e.getValue().get("request").deepCopy());
                    ((com.fasterxml.jackson.databind.node.ObjectNode) fragment.get("extra")).setAll(
                            (com.fasterxml.jackson.databind.node.ObjectNode) chat.get("request").get("extra"));
                    refusedBeforeSending(fragment, e.getValue().get("code").asText());
                })));
        return tests.stream();
    }

    @Test
    void chatLegShapes() throws Exception {
        rig.producerAnswersChat(WireMockRig.CHAT_PREFILL_ANSWER);
        rig.consumerStreamsChat(WireMockRig.CHAT_DECODE_STREAM);
        JsonNode chat = MAPPING.get("chat");
        List<JsonNode> bodies = run(request(chat.get("request")));
        for (String leg : List.of("prefill", "decode")) {
            JsonNode body = bodies.get(leg.equals("prefill") ? 0 : 1);
            JsonNode shape = chat.get("legs").get(leg);
            assertEquals("/v1/chat/completions", shape.get("path").asText());
            shape.get("set").fields().forEachRemaining(f -> assertTrue(
                    Json.equivalent(f.getValue(), body.path(f.getKey())), leg + " " + f.getKey() + " in " + body));
            shape.path("absent").forEach(k -> assertTrue(body.path(k.asText()).isMissingNode(), leg + " " + k));
            assertEquals("127.0.0.1", body.path("bootstrap_host").asText(), leg);
            assertEquals(9100, body.path("bootstrap_port").asInt(), leg);
        }
    }
}
