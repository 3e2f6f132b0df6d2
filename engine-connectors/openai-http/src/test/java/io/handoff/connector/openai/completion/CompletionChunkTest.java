package io.handoff.connector.openai.completion;

import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.EngineException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CompletionChunkTest {

    private static CompletionChunk read(String json) {
        return CompletionChunk.read(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aTokenChunkIsReadFieldByFieldAndEveryOtherMemberSkipped() {
        String json = "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"m\","
                + "\"system_fingerprint\":{\"deep\":[1,{\"x\":[2,3]}]},"
                + "\"choices\":[{\"index\":1,\"text\":\" w1\",\"token_ids\":[7,8,3000000000],\"logprobs\":null,"
                + "\"finish_reason\":null,\"stop_reason\":null,\"extra\":{\"a\":[{}]}}],\"usage\":null}";
        CompletionChunk chunk = read(json);

        assertEquals(1, chunk.choices().size());
        CompletionChunk.Choice choice = chunk.choices().get(0);
        assertEquals(1, choice.index());
        assertEquals(" w1", choice.text());
        assertArrayEquals(new int[] {7, 8, (int) 3000000000L}, choice.tokenIds());
        assertNull(choice.logprobs());
        assertNull(choice.finishReason());
        assertNull(choice.stopReason());
        assertNull(chunk.usage());
        assertNull(chunk.error());
        assertEquals("text_completion", chunk.object());
        assertEquals(chunk, CompletionChunk.of(Json.parse(json)), "bytes and a tree read alike");
    }

    @Test
    void chatTextComesFromTheDeltaOrTheMessageAndToolCallsAreSeen() {
        CompletionChunk delta = read("{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                + "\"content\":\"hi\",\"tool_calls\":[]}}]}");
        assertEquals("hi", delta.choices().get(0).text());
        assertFalse(delta.choices().get(0).toolCalls(), "an empty tool_calls array calls nothing");

        CompletionChunk message = read("{\"choices\":[{\"message\":{\"content\":null,"
                + "\"tool_calls\":[{\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}},{}]}}]}");
        assertNull(message.choices().get(0).text());
        assertTrue(message.choices().get(0).toolCalls());

        CompletionChunk both = read("{\"choices\":[{\"text\":\"t\",\"delta\":{\"content\":\"d\"}}]}");
        assertEquals("t", both.choices().get(0).text(), "text wins over the chat fields");
    }

    @Test
    void finishReasonsKeepTheirShapeAndUsageAndLogprobsStayTrees() {
        CompletionChunk chunk = read("{\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":{\"type\":\"stop\","
                + "\"matched\":2},\"matched_stop\":2,\"logprobs\":{\"tokens\":[\"a\"],\"token_logprobs\":[-0.5]}},"
                + "{\"index\":1,\"finish_reason\":\"length\",\"stop_reason\":\"END\"}],"
                + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4,\"total_tokens\":7}}");
        assertTrue(chunk.choices().get(0).finishReason().isObject());
        assertEquals(2, chunk.choices().get(0).matchedStop().asInt());
        assertEquals(-0.5, chunk.choices().get(0).logprobs().path("token_logprobs").path(0).asDouble());
        assertEquals("length", chunk.choices().get(1).finishReason().asText());
        assertEquals("END", chunk.choices().get(1).stopReason().asText());
        assertEquals(7, chunk.usage().path("total_tokens").asInt());
    }

    @Test
    void membersOfTheWrongTypeAreIgnoredAsTheTreeReaderIgnoredThem() {
        CompletionChunk chunk = read("{\"choices\":{\"0\":{\"text\":\"x\"}},\"usage\":[1],\"object\":5}");
        assertEquals(List.of(), chunk.choices());
        assertNull(chunk.usage());
        assertNull(chunk.object());

        CompletionChunk odd = read("{\"choices\":[3,{\"index\":\"2\",\"text\":7,\"token_ids\":[\"x\",[1],4],"
                + "\"delta\":\"no\",\"logprobs\":[]}]}");
        assertEquals(1, odd.choices().size());
        assertEquals(2, odd.choices().get(0).index());
        assertNull(odd.choices().get(0).text());
        assertArrayEquals(new int[] {0, 0, 4}, odd.choices().get(0).tokenIds());
        assertNull(odd.choices().get(0).logprobs());
    }

    @Test
    void whatIsNoJsonObjectIsRefused() {
        for (String bad : List.of("[]", "\"text\"", "{\"choices\":[", "", "nul")) {
            assertThrows(IllegalArgumentException.class, () -> read(bad), bad);
        }
    }

    @Test
    void errorEventsFailTheStreamWithWhatTheEngineSaid() {
        EngineException wrapped = assertThrows(EngineException.class, () -> CompletionChunk.EVENTS.read(
                "{\"error\":{\"message\":\"boom\",\"code\":503}}".getBytes(StandardCharsets.UTF_8), "POST /x on d"));
        assertTrue(wrapped.getMessage().contains("boom"), wrapped.getMessage());

        EngineException bare = assertThrows(EngineException.class, () -> CompletionChunk.EVENTS.read(
                "{\"object\":\"error\",\"message\":\"kv receive failed\",\"code\":500}"
                        .getBytes(StandardCharsets.UTF_8), "POST /x on d"));
        assertTrue(bare.getMessage().contains("kv receive failed"), bare.getMessage());

        assertThrows(EngineException.class, () -> CompletionChunk.EVENTS.read(
                "{\"error\":null}".getBytes(StandardCharsets.UTF_8), "POST /x on d"),
                "an error member is an error event whatever its value, as before");
    }
}
