package io.handoff.connector.sglang;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.connector.openai.completion.ChatRequests;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.connector.testsupport.openai.OpenAiMappingContract;
import io.handoff.openengine.v1.GenerateRequest;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * Holds {@code mappings/sglang.mapping.json} (the machine-readable part of {@code mappings/sglang.md}) against what
 * the connector does, on the two legs (prefill, decode) of a concurrent handoff: the shared checks of
 * {@link OpenAiMappingContract}, plus the legs' shapes, the styles and the chat's refusals and shapes.
 */
class SglangMappingTest extends OpenAiMappingContract<WireMockRig> {

    SglangMappingTest() {
        super("sglang", SglangFields.GATEWAY, SglangFields.EXTRA_KEYS, SglangFields.CHAT_EXTRA_KEYS);
    }

    @Override
    protected WireMockRig startRig() {
        WireMockRig rig = WireMockRig.standard();
        rig.producerAnswers(WireMockRig.PREFILL_ANSWER);
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
        return rig;
    }

    @Override
    protected List<ScheduleStyle> refusingStyles() {
        return List.of(ScheduleStyle.CONCURRENT);
    }

    /** Both legs' bodies for one request, without the identities minted afresh for every handoff. */
    @Override
    protected Map<String, JsonNode> bodiesOfEveryLeg(GenerateRequest request) throws Exception {
        rig.resetRequests();
        Handoff handoff = rig.connector.plan("r1", ScheduleStyle.CONCURRENT, request, rig.prefill, rig.decode);
        WireMockRig.Run run = rig.run(handoff);
        assertInstanceOf(PrefillResult.Ready.class, run.prefillResult());
        run.events();
        String path = ChatRequests.path(request);
        Map<String, JsonNode> bodies = new LinkedHashMap<>();
        bodies.put("prefill", withoutIds(WireMockRig.bodies(rig.prefillEngine, path).get(0)));
        bodies.put("decode", withoutIds(WireMockRig.bodies(rig.decodeEngine, path).get(0)));
        return bodies;
    }

    private static JsonNode withoutIds(JsonNode body) {
        ObjectNode copy = ((ObjectNode) body).deepCopy();
        copy.remove(List.of("rid", "bootstrap_room"));
        return copy;
    }

    /** The documented shape of both legs, and the bootstrap address both carry: the prefill's. */
    private static void assertLegShapes(JsonNode shapes, Map<String, JsonNode> bodies) {
        bodies.forEach((leg, body) -> {
            assertShape(leg, shapes.get(leg), body);
            assertEquals("127.0.0.1", body.path("bootstrap_host").asText(), leg);
            assertEquals(9100, body.path("bootstrap_port").asInt(), leg);
        });
    }

    @Test
    void legShapes() throws Exception {
        assertLegShapes(mapping.get("legs"), bodiesOfEveryLeg(BASE));
        assertEquals(mapping.get("legs").get("abort").get("path").asText(), SglangEngineConnector.ABORT_PATH);
    }

    @Test
    void theStylesAgreeWithTheDeclaredCapabilities() {
        mapping.get("styles").fields().forEachRemaining(e -> {
            if (e.getKey().equals("bypass")) {
                assertEquals(e.getValue().asText().equals("native"), rig.connector.capabilities().localPrefill());
                return;
            }
            ScheduleStyle style = ScheduleStyle.fromConfigName(e.getKey());
            assertEquals(e.getValue().asText().equals("native"),
                    rig.connector.capabilities().nativeStyles().contains(style), e.getKey());
        });
    }

    @TestFactory
    Stream<DynamicTest> chatKeysOutsideTheListAreRefused() {
        JsonNode chat = mapping.get("chat");
        List<DynamicTest> tests = new ArrayList<>();
        chat.get("refused").fields().forEachRemaining(e -> tests.add(DynamicTest.dynamicTest(e.getKey(), () -> {
            ObjectNode fragment = chat.get("request").deepCopy();
            fragment.setAll((ObjectNode) e.getValue().get("request").deepCopy());
            ((ObjectNode) fragment.get("extra")).setAll((ObjectNode) chat.get("request").get("extra"));
            refusedBeforeSending(fragment, e.getValue().get("code").asText());
        })));
        return tests.stream();
    }

    @Test
    void chatLegShapes() throws Exception {
        rig.producerAnswersChat(WireMockRig.CHAT_PREFILL_ANSWER);
        rig.consumerStreamsChat(WireMockRig.CHAT_DECODE_STREAM);
        JsonNode chat = mapping.get("chat");
        for (String leg : List.of("prefill", "decode")) {
            assertEquals("/v1/chat/completions", chat.get("legs").get(leg).get("path").asText());
        }
        assertLegShapes(chat.get("legs"), bodiesOfEveryLeg(request(chat.get("request"))));
    }
}
