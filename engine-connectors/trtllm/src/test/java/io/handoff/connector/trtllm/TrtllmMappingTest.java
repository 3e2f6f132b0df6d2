package io.handoff.connector.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.connector.testsupport.openai.OpenAiMappingContract;
import io.handoff.openengine.v1.GenerateRequest;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Holds {@code mappings/trtllm.mapping.json} against what the connector sends on its three legs: the context leg
 * ({@code context}), the generation of a context-first handoff ({@code cf_generation}, whose prompt is the context's
 * prompt_token_ids) and the generation of a generation-first one ({@code gf_generation}). A refused field is refused
 * by plan() in both styles. The shared checks are {@link OpenAiMappingContract}'s; the leg and chat shapes are here.
 */
class TrtllmMappingTest extends OpenAiMappingContract<WireMockRig> {

    TrtllmMappingTest() {
        super("trtllm", TrtllmFields.GATEWAY, TrtllmFields.EXTRA_KEYS, TrtllmFields.CHAT_EXTRA_KEYS);
    }

    @Override
    protected WireMockRig startRig() {
        WireMockRig rig = new WireMockRig();
        rig.serverInfo();
        rig.generationStreams(WireMockRig.GENERATION_STREAM);
        return rig;
    }

    @Override
    protected List<ScheduleStyle> refusingStyles() {
        return List.of(ScheduleStyle.CONTEXT_FIRST, ScheduleStyle.GENERATION_FIRST);
    }

    /** A context-first handoff (the context answering as {@code answerContext} stubs it), then a generation-first. */
    private void runBothStyles(GenerateRequest request, Consumer<Handoff> answerContext) {
        Handoff handoff = rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, request, rig.prefill, rig.decode);
        answerContext.accept(handoff);
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                rig.connector.prefill(handoff).await().atMost(WireMockRig.WAIT));
        rig.connector.decode(ready.handoff()).collect().asList().await().atMost(WireMockRig.WAIT);
        Handoff genFirst = rig.connector.plan("r1", ScheduleStyle.GENERATION_FIRST, request, rig.prefill,
                rig.decode);
        rig.connector.decode(genFirst).collect().asList().await().atMost(WireMockRig.WAIT);
    }

    @Override
    protected Map<String, JsonNode> bodiesOfEveryLeg(GenerateRequest request) {
        rig.resetRequests();
        runBothStyles(request, handoff -> rig.contextAnswers(handoff, "length"));
        List<JsonNode> generations = WireMockRig.completionBodies(rig.decodeEngine);
        Map<String, JsonNode> bodies = new LinkedHashMap<>();
        bodies.put("context", WireMockRig.completionBodies(rig.prefillEngine).get(0));
        bodies.put("cf_generation", generations.get(0));
        bodies.put("gf_generation", generations.get(1));
        return bodies;
    }

    /** The minted ids differ between runs by design; everything else must be equal. */
    @Override
    protected JsonNode withoutMintedIds(JsonNode body) {
        JsonNode copy = body.deepCopy();
        ((ObjectNode) copy.get("disaggregated_params")).remove(List.of("disagg_request_id", "ctx_request_id"));
        return copy;
    }

    @Test
    void legShapes() {
        Map<String, JsonNode> bodies = bodiesOfEveryLeg(BASE);
        JsonNode legs = mapping.get("legs");
        JsonNode context = bodies.get("context");
        assertEquals(false, context.get("stream").asBoolean());
        assertEquals("context_only", context.at("/disaggregated_params/request_type").asText());
        legs.get("context").get("absent").forEach(k -> assertTrue(context.path(k.asText()).isMissingNode()));
        for (String leg : List.of("generation_context_first", "generation_generation_first")) {
            JsonNode body = bodies.get(leg.equals("generation_context_first") ? "cf_generation" : "gf_generation");
            legs.get(leg).get("set").fields().forEachRemaining(f -> {
                if (!f.getValue().isTextual()) {
                    assertTrue(Json.equivalent(f.getValue(), body.path(f.getKey())), leg + " " + f.getKey());
                }
            });
            assertEquals("generation_only", body.at("/disaggregated_params/request_type").asText());
        }
        assertEquals(1, bodies.get("gf_generation").at("/disaggregated_params/schedule_style").asInt());
        assertEquals(0, bodies.get("cf_generation").at("/disaggregated_params/schedule_style").asInt());

        rig.decodeEngine.resetRequests();
        rig.connector.decodeLocally("r1", BASE, rig.decode).collect().asList().await().atMost(WireMockRig.WAIT);
        assertShape("local", legs.get("local"), WireMockRig.completionBodies(rig.decodeEngine).get(0));
    }

    @Test
    void chatLegShapes() {
        JsonNode chat = mapping.get("chat");
        GenerateRequest request = request(chat.get("request"));
        rig.chatGenerationStreams(WireMockRig.CHAT_GENERATION_STREAM);
        runBothStyles(request, handoff -> rig.chatContextAnswers(handoff, "length"));
        rig.connector.decodeLocally("r1", request, rig.decode).collect().asList().await().atMost(WireMockRig.WAIT);
        assertEquals(0, WireMockRig.completionBodies(rig.prefillEngine).size()
                + WireMockRig.completionBodies(rig.decodeEngine).size(), "nothing goes to /v1/completions");
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
