package io.handoff.connector.trtllm;

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
 * Holds {@code mappings/trtllm.mapping.json} against what the connector sends: each mapped field, set alone, lands at
 * its native path on the context leg and on the generation leg of both styles; each refused field is refused by
 * plan() (and by a bypass) with nothing sent; the file names every request field there is.
 */
class TrtllmMappingTest {

    private static final JsonNode MAPPING = load();
    private static final GenerateRequest BASE = GenerateRequest.newBuilder().setPrompt("base prompt").build();

    private WireMockRig rig;

    @BeforeEach
    void start() {
        rig = new WireMockRig();
        rig.serverInfo();
        rig.generationStreams(WireMockRig.GENERATION_STREAM);
    }

    @AfterEach
    void stop() {
        rig.close();
    }

    private static JsonNode load() {
        try (InputStream in = TrtllmMappingTest.class.getResourceAsStream("/mappings/trtllm.mapping.json")) {
            assertNotNull(in, "mappings/trtllm.mapping.json is not on the test classpath (see the pom)");
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

    /** The bodies of one request: [context leg, context-first generation, generation-first generation]. */
    private List<JsonNode> run(GenerateRequest request) {
        rig.prefillEngine.resetRequests();
        rig.decodeEngine.resetRequests();
        Handoff handoff = rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, request, rig.prefill, rig.decode);
        rig.contextAnswers(handoff, "length");
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                rig.connector.prefill(handoff).await().atMost(WireMockRig.WAIT));
        rig.connector.decode(ready.handoff()).collect().asList().await().atMost(WireMockRig.WAIT);
        Handoff genFirst = rig.connector.plan("r1", ScheduleStyle.GENERATION_FIRST, request, rig.prefill,
                rig.decode);
        rig.connector.decode(genFirst).collect().asList().await().atMost(WireMockRig.WAIT);
        List<JsonNode> gens = WireMockRig.completionBodies(rig.decodeEngine);
        return List.of(WireMockRig.completionBodies(rig.prefillEngine).get(0), gens.get(0), gens.get(1));
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
        for (ScheduleStyle style : List.of(ScheduleStyle.CONTEXT_FIRST, ScheduleStyle.GENERATION_FIRST)) {
            EngineException e = assertThrows(EngineException.class,
                    () -> rig.connector.plan("r1", style, request, rig.prefill, rig.decode));
            assertEquals(ErrorCode.valueOf("ERROR_CODE_" + code), e.code(), e.getMessage());
        }
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
        assertEquals(fields("gateway").keySet(), TrtllmFields.GATEWAY);
        Set<String> extraKeys = new TreeSet<>();
        MAPPING.get("extra_keys").forEach(k -> extraKeys.add(k.asText()));
        assertEquals(TrtllmFields.EXTRA_KEYS, extraKeys);
    }

    @TestFactory
    Stream<DynamicTest> mappedFieldsLandAtTheirNativePath() {
        return fields("native").entrySet().stream().map(e -> DynamicTest.dynamicTest(e.getKey(), () -> {
            JsonNode entry = e.getValue();
            List<JsonNode> bodies = run(request(entry.get("request")));
            String path = entry.get("native").asText();
            JsonNode value = entry.get("value");
            JsonNode cf = entry.has("cf_generation_value") ? entry.get("cf_generation_value") : value;
            assertTrue(Json.equivalent(value, at(bodies.get(0), path)), "context " + path + " in " + bodies.get(0));
            assertTrue(Json.equivalent(cf, at(bodies.get(1), path)), "cf generation " + path + " in "
                    + bodies.get(1));
            assertTrue(Json.equivalent(value, at(bodies.get(2), path)), "gf generation " + path + " in "
                    + bodies.get(2));
        }));
    }

    @TestFactory
    Stream<DynamicTest> refusedFieldsAreRefusedBeforeAnythingIsSent() {
        List<DynamicTest> tests = new ArrayList<>();
        fields("refused").forEach((name, entry) -> tests.add(DynamicTest.dynamicTest(name, () -> {
            refusedBeforeSending(entry.get("request"), entry.get("refused").asText());
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
            List<JsonNode> without = strip(run(BASE));
            List<JsonNode> with = strip(run(request(e.getValue().get("request"))));
            assertEquals(without, with);
        }));
    }

    /** The minted ids differ between runs by design; everything else must be equal. */
    private static List<JsonNode> strip(List<JsonNode> bodies) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode b : bodies) {
            JsonNode copy = b.deepCopy();
            var dp = (com.fasterxml.jackson.databind.node.ObjectNode) copy.get("disaggregated_params");
            dp.remove(List.of("disagg_request_id", "ctx_request_id"));
            out.add(copy);
        }
        return out;
    }

    @Test
    void legShapes() {
        List<JsonNode> bodies = run(BASE);
        JsonNode legs = MAPPING.get("legs");
        JsonNode context = legs.get("context");
        assertEquals(false, bodies.get(0).get("stream").asBoolean());
        assertEquals("context_only", bodies.get(0).at("/disaggregated_params/request_type").asText());
        context.get("absent").forEach(k -> assertTrue(bodies.get(0).path(k.asText()).isMissingNode()));
        for (String leg : List.of("generation_context_first", "generation_generation_first")) {
            JsonNode body = bodies.get(leg.equals("generation_context_first") ? 1 : 2);
            legs.get(leg).get("set").fields().forEachRemaining(f -> {
                if (!f.getValue().isTextual()) {
                    assertTrue(Json.equivalent(f.getValue(), body.path(f.getKey())), leg + " " + f.getKey());
                }
            });
            assertEquals("generation_only", body.at("/disaggregated_params/request_type").asText());
        }
        assertEquals(1, bodies.get(2).at("/disaggregated_params/schedule_style").asInt());
        assertEquals(0, bodies.get(1).at("/disaggregated_params/schedule_style").asInt());

        rig.decodeEngine.resetRequests();
        rig.connector.decodeLocally("r1", BASE, rig.decode).collect().asList().await().atMost(WireMockRig.WAIT);
        JsonNode local = WireMockRig.completionBodies(rig.decodeEngine).get(0);
        JsonNode localLeg = legs.get("local");
        localLeg.get("set").fields().forEachRemaining(f -> assertTrue(
                Json.equivalent(f.getValue(), local.path(f.getKey())), "local " + f.getKey()));
        localLeg.get("absent").forEach(k -> assertTrue(local.path(k.asText()).isMissingNode()));
    }

    @Test
    void theChatKeysAgreeWithTheConnector() {
        Set<String> chatKeys = new TreeSet<>();
        MAPPING.get("chat").get("extra_keys").forEach(k -> chatKeys.add(k.asText()));
        assertEquals(TrtllmFields.CHAT_EXTRA_KEYS, chatKeys);
        assertTrue(rig.connector.capabilities().inputs().contains(io.handoff.connector.spi.InputKind.CHAT_MESSAGES));
    }

    @Test
    void chatLegShapes() {
        JsonNode chat = MAPPING.get("chat");
        GenerateRequest request = request(chat.get("request"));
        rig.chatGenerationStreams(WireMockRig.CHAT_GENERATION_STREAM);
        Handoff handoff = rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, request, rig.prefill, rig.decode);
        rig.chatContextAnswers(handoff, "length");
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                rig.connector.prefill(handoff).await().atMost(WireMockRig.WAIT));
        rig.connector.decode(ready.handoff()).collect().asList().await().atMost(WireMockRig.WAIT);
        Handoff genFirst = rig.connector.plan("r1", ScheduleStyle.GENERATION_FIRST, request, rig.prefill,
                rig.decode);
        rig.connector.decode(genFirst).collect().asList().await().atMost(WireMockRig.WAIT);
        rig.connector.decodeLocally("r1", request, rig.decode).collect().asList().await().atMost(WireMockRig.WAIT);
        assertEquals(0, WireMockRig.completionBodies(rig.prefillEngine).size() + WireMockRig.completionBodies(rig.decodeEngine).size(),
                "nothing goes to /v1/completions");
        List<JsonNode> gens = WireMockRig.chatBodies(rig.decodeEngine);
        Map<String, JsonNode> bodies = Map.of("context", WireMockRig.chatBodies(rig.prefillEngine).get(0),
                "generation_context_first", gens.get(0), "generation_generation_first", gens.get(1),
                "local", gens.get(2));
        bodies.forEach((leg, body) -> {
            JsonNode shape = chat.get("legs").get(leg);
            assertEquals("/v1/chat/completions", shape.get("path").asText());
            shape.get("set").fields().forEachRemaining(f -> {
                if (f.getValue().isTextual()) {
                    assertTrue(body.has(f.getKey()), leg + " " + f.getKey());
                } else {
                    assertTrue(Json.equivalent(f.getValue(), body.path(f.getKey())), leg + " " + f.getKey());
                }
            });
            shape.get("absent").forEach(k -> assertTrue(body.path(k.asText()).isMissingNode(), leg + " " + k));
        });
        assertTrue(Json.equivalent(Json.parse("[1,32,405,8784,338,2,32,9,7]"),
                bodies.get("generation_context_first").get("prompt_token_ids")));
    }
}
