package io.handoff.connector.testsupport.openai;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.connector.openai.completion.RequestFieldPaths;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.InputKind;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.connector.testsupport.ProtoJson;
import io.handoff.connector.testsupport.mapping.MappingDocumentContract;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mapping-document contract for families whose engines speak the OpenAI-compatible HTTP API. Their documents
 * key {@code fields} by field path; an entry is {@code native} (its JSON path in the body of every leg, with the
 * {@code value} expected there, or {@code <leg>_value} on a leg where it differs), {@code refused} (the error code
 * of {@code plan()}), or {@code gateway}; {@code refused_when} names a value of a carried field that is refused.
 * {@code request} is the openengine.v1 request fragment, in proto JSON, that sets the field. The legs run against
 * the {@link WireMockEnginePair} of the family, whose captured bodies are checked.
 *
 * @param <R> the family's rig
 */
public abstract class OpenAiMappingContract<R extends WireMockEnginePair> extends MappingDocumentContract {

    /** The request a fragment is merged into: a prompt, so that every fragment makes a complete request. */
    protected static final GenerateRequest BASE = GenerateRequest.newBuilder().setPrompt("base prompt").build();

    protected final JsonNode mapping;
    protected R rig;
    private final Set<String> gatewayFields;
    private final Set<String> extraKeys;
    private final Set<String> chatExtraKeys;

    /**
     * @param gatewayFields the fields the connector leaves to the gateway
     * @param extraKeys     the {@code extra} keys the connector passes to the engines
     * @param chatExtraKeys the {@code extra} keys it passes in a chat besides those
     */
    protected OpenAiMappingContract(String family, Set<String> gatewayFields, Set<String> extraKeys,
            Set<String> chatExtraKeys) {
        this.mapping = Json.parse(documentText(family));
        this.gatewayFields = gatewayFields;
        this.extraKeys = extraKeys;
        this.chatExtraKeys = chatExtraKeys;
    }

    /** The family's rig, with the answers a plain handoff needs stubbed on both engines. */
    protected abstract R startRig();

    /** The styles a refused field must be refused in by {@code plan()}. */
    protected abstract List<ScheduleStyle> refusingStyles();

    /**
     * Runs one request through every leg the family sends and gives what each engine received, by leg name in leg
     * order; the leg names are those of the document's {@code <leg>_value} keys.
     */
    protected abstract Map<String, JsonNode> bodiesOfEveryLeg(GenerateRequest request) throws Exception;

    /** A leg's body without the ids the connector mints afresh for every handoff, for comparing two runs. */
    protected JsonNode withoutMintedIds(JsonNode body) {
        return body;
    }

    @BeforeEach
    void startTheRig() {
        rig = startRig();
    }

    @AfterEach
    void stopTheRig() {
        rig.close();
    }

    /** The request a fragment describes: merged into {@link #BASE}, unless it brings its own input. */
    protected static GenerateRequest request(JsonNode fragment) {
        // a fragment that sets the prompt replaces the base one (they share a oneof); a chat has none
        GenerateRequest.Builder b = fragment.has("prompt") || fragment.has("tokenIds")
                || fragment.path("extra").has("messages") ? GenerateRequest.newBuilder() : BASE.toBuilder();
        return ProtoJson.merge(Json.write(fragment), b).build();
    }

    /** The node at a dotted JSON path, missing where any step is. */
    protected static JsonNode at(JsonNode body, String dottedPath) {
        JsonNode node = body;
        for (String part : dottedPath.split("\\.")) {
            node = node.path(part);
        }
        return node;
    }

    /**
     * Asserts a leg's documented shape on what its engine received: each {@code set} value is there (compared by
     * value), each {@code absent} key is not.
     */
    protected static void assertShape(String leg, JsonNode shape, JsonNode body) {
        shape.get("set").fields().forEachRemaining(f -> assertTrue(Json.equivalent(f.getValue(),
                body.path(f.getKey())), leg + " " + f.getKey() + " in " + body));
        shape.path("absent").forEach(k -> assertTrue(body.path(k.asText()).isMissingNode(), leg + " " + k.asText()));
    }

    /** Asserts that {@code plan()} refuses the fragment with {@code code} in every refusing style, sending nothing. */
    protected void refusedBeforeSending(JsonNode fragment, String code) {
        GenerateRequest request = request(fragment);
        for (ScheduleStyle style : refusingStyles()) {
            EngineException e = assertThrows(EngineException.class,
                    () -> rig.connector.plan("r1", style, request, rig.prefill, rig.decode));
            assertEquals(ErrorCode.valueOf("ERROR_CODE_" + code), e.code(), e.getMessage());
        }
        assertEquals(0, rig.sent(), "nothing may be sent for a refused request");
    }

    @Override
    protected Set<String> requestFieldPaths() {
        return RequestFieldPaths.all();
    }

    @Override
    protected Set<String> documentedFieldPaths() {
        Set<String> listed = new TreeSet<>();
        mapping.get("fields").fieldNames().forEachRemaining(listed::add);
        return listed;
    }

    @Override
    protected Map<String, JsonNode> fields(Disposition disposition) {
        return fieldsWith(switch (disposition) {
            case NATIVE -> "native";
            case REFUSED -> "refused";
            case GATEWAY -> "gateway";
        });
    }

    private Map<String, JsonNode> fieldsWith(String key) {
        Map<String, JsonNode> out = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = mapping.get("fields").fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getValue().has(key)) {
                out.put(e.getKey(), e.getValue());
            }
        }
        return out;
    }

    @Override
    protected ConnectorCapabilities capabilities() {
        return rig.connector.capabilities();
    }

    @Override
    protected int requestsSent() {
        return rig.sent();
    }

    @Override
    protected void assertArrivesAsMapped(String path, JsonNode entry) throws Exception {
        Map<String, JsonNode> bodies = bodiesOfEveryLeg(request(entry.get("request")));
        String nativePath = entry.get("native").asText();
        bodies.forEach((leg, body) -> {
            JsonNode expected = entry.has(leg + "_value") ? entry.get(leg + "_value") : entry.get("value");
            assertTrue(Json.equivalent(expected, at(body, nativePath)),
                    leg + " " + nativePath + ": expected " + expected + " in " + body);
        });
    }

    @Override
    protected void assertRefusedBeforeSending(String path, JsonNode entry) {
        refusedBeforeSending(entry.get("request"), entry.get("refused").asText());
        // a bypass carries the same fields, so it refuses the same way, before sending
        GenerateRequest request = request(entry.get("request"));
        assertThrows(EngineException.class, () -> rig.connector.decodeLocally("r1", request, rig.decode)
                .collect().asList().await().atMost(WireMockEnginePair.WAIT));
    }

    @Override
    protected void assertNeverSent(String path, JsonNode entry) throws Exception {
        List<JsonNode> without = bodiesOfEveryLeg(BASE).values().stream().map(this::withoutMintedIds).toList();
        List<JsonNode> with = bodiesOfEveryLeg(request(entry.get("request"))).values().stream()
                .map(this::withoutMintedIds).toList();
        assertEquals(without, with);
    }

    @TestFactory
    Stream<DynamicTest> refusedValuesAreRefusedBeforeAnythingIsSent() {
        return fieldsWith("refused_when").entrySet().stream().map(e -> DynamicTest.dynamicTest(
                e.getKey() + " (value)", () -> refusedBeforeSending(e.getValue().get("refused_when").get("request"),
                        e.getValue().get("refused_when").get("code").asText())));
    }

    @Test
    void theGatewayFieldsAndExtraKeysAgreeWithTheConnector() {
        assertEquals(fields(Disposition.GATEWAY).keySet(), gatewayFields);
        Set<String> listed = new TreeSet<>();
        mapping.get("extra_keys").forEach(k -> listed.add(k.asText()));
        assertEquals(extraKeys, listed);
    }

    @Test
    void theChatKeysAgreeWithTheConnector() {
        Set<String> listed = new TreeSet<>();
        mapping.get("chat").get("extra_keys").forEach(k -> listed.add(k.asText()));
        assertEquals(chatExtraKeys, listed);
        assertTrue(rig.connector.capabilities().inputs().contains(InputKind.CHAT_MESSAGES));
    }
}
