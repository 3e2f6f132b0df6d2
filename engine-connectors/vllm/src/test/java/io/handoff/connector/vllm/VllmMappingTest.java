package io.handoff.connector.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
 * Holds {@code mappings/vllm.mapping.json} (the machine-readable part of {@code mappings/vllm.md}) against what the
 * connector does, on its two legs (prefill, decode) of a context-first handoff: the shared checks of
 * {@link OpenAiMappingContract}, plus the legs' shapes and the chat's.
 */
class VllmMappingTest extends OpenAiMappingContract<WireMockRig> {

    VllmMappingTest() {
        super("vllm", VllmFields.GATEWAY, VllmFields.EXTRA_KEYS, VllmFields.CHAT_EXTRA_KEYS);
    }

    @Override
    protected WireMockRig startRig() {
        WireMockRig rig = WireMockRig.fixedHold();
        rig.producerAnswers("length", WireMockRig.PRODUCER_PARAMS);
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
        return rig;
    }

    @Override
    protected List<ScheduleStyle> refusingStyles() {
        return List.of(ScheduleStyle.CONTEXT_FIRST);
    }

    @Override
    protected Map<String, JsonNode> bodiesOfEveryLeg(GenerateRequest request) {
        rig.resetRequests();
        Handoff handoff = rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, request, rig.prefill, rig.decode);
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                rig.connector.prefill(handoff).await().atMost(WireMockRig.WAIT));
        rig.connector.decode(ready.handoff()).collect().asList().await().atMost(WireMockRig.WAIT);
        Map<String, JsonNode> bodies = new LinkedHashMap<>();
        bodies.put("prefill", WireMockRig.bodies(rig.prefillEngine).get(0));
        bodies.put("decode", WireMockRig.bodies(rig.decodeEngine).get(0));
        return bodies;
    }

    /** The document's shape of the local (bypass) leg, checked on what it sent for {@code request}. */
    private void assertLocalShape(String what, JsonNode shape, GenerateRequest request) {
        rig.decodeEngine.resetRequests();
        rig.connector.decodeLocally("r1", request, rig.decode).collect().asList().await().atMost(WireMockRig.WAIT);
        assertEquals(shape.get("path").asText(), WireMockRig.requests(rig.decodeEngine).get(0).getRequest().getUrl(),
                what);
        assertShape(what, shape, WireMockRig.bodies(rig.decodeEngine).get(0));
    }

    @Test
    void legShapes() {
        Map<String, JsonNode> bodies = bodiesOfEveryLeg(BASE);
        JsonNode legs = mapping.get("legs");
        assertShape("prefill", legs.get("prefill"), bodies.get("prefill"));
        assertShape("decode", legs.get("decode"), bodies.get("decode"));
        assertLocalShape("local", legs.get("local"), BASE);
    }

    @TestFactory
    Stream<DynamicTest> chatKeysOutsideTheListAreRefusedBeforeAnythingIsSent() {
        JsonNode chat = mapping.get("chat");
        List<DynamicTest> tests = new ArrayList<>();
        chat.get("refused_extra_keys").fields().forEachRemaining(e -> tests.add(DynamicTest.dynamicTest(e.getKey(),
                () -> {
                    ObjectNode fragment = chat.get("request").deepCopy();
                    ((ObjectNode) fragment.get("extra")).putObject(e.getKey());
                    refusedBeforeSending(fragment, e.getValue().asText());
                })));
        return tests.stream();
    }

    @Test
    void chatLegShapes() {
        rig.producerAnswersChat("length", WireMockRig.PRODUCER_PARAMS);
        rig.consumerStreamsChat(WireMockRig.CHAT_DECODE_STREAM);
        JsonNode chat = mapping.get("chat");
        GenerateRequest request = request(chat.get("request"));
        Map<String, JsonNode> bodies = bodiesOfEveryLeg(request);
        Map<String, String> paths = Map.of(
                "prefill", WireMockRig.requests(rig.prefillEngine).get(0).getRequest().getUrl(),
                "decode", WireMockRig.requests(rig.decodeEngine).get(0).getRequest().getUrl());
        for (String leg : List.of("prefill", "decode")) {
            JsonNode shape = chat.get("legs").get(leg);
            assertEquals(shape.get("path").asText(), paths.get(leg), leg);
            assertShape("chat " + leg, shape, bodies.get(leg));
        }
        assertLocalShape("local chat", chat.get("legs").get("local"), request);
    }
}
