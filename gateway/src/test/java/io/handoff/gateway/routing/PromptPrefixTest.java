package io.handoff.gateway.routing;

import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.connector.spi.InputKind;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.TokenIds;
import org.junit.jupiter.api.Test;

import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The prefix key reads the prompt's first blocks and nothing after them, for text, token ids and chats. */
class PromptPrefixTest {

    /** Two blocks of four tokens: 8 token ids, or 32 characters of text. */
    private static final PromptPrefix PREFIX = new PromptPrefix(4, 2);

    private static long text(String prompt) {
        return PREFIX.keyOf(GenerateRequest.newBuilder().setPrompt(prompt).build());
    }

    private static long tokens(int... ids) {
        TokenIds.Builder t = TokenIds.newBuilder();
        IntStream.of(ids).forEach(t::addIds);
        return PREFIX.keyOf(GenerateRequest.newBuilder().setTokenIds(t).build());
    }

    private static long chat(Value... messages) {
        return PREFIX.keyOf(GenerateRequest.newBuilder().setExtra(Struct.newBuilder().putFields(InputKind.MESSAGES,
                Value.newBuilder().setListValue(ListValue.newBuilder().addAllValues(java.util.List.of(messages)))
                        .build())).build());
    }

    private static Value message(String first, String firstValue, String second, String secondValue) {
        return Value.newBuilder().setStructValue(Struct.newBuilder()
                .putFields(first, Value.newBuilder().setStringValue(firstValue).build())
                .putFields(second, Value.newBuilder().setStringValue(secondValue).build())).build();
    }

    @Test
    void textIsKeyedByItsFirstBlocksOfCharacters() {
        String window = "0123456789abcdefghijklmnopqrstuv"; // 32 characters
        assertEquals(text(window + " one question"), text(window + " another"));
        assertNotEquals(text(window), text("X" + window.substring(1)));
        assertNotEquals(text("short prompt"), text("short prompt!"), "a prompt within the window counts whole");
    }

    @Test
    void tokenIdsAreKeyedByTheirFirstBlocks() {
        assertEquals(tokens(1, 2, 3, 4, 5, 6, 7, 8, 9), tokens(1, 2, 3, 4, 5, 6, 7, 8, 10, 11));
        assertNotEquals(tokens(1, 2, 3, 4, 5, 6, 7, 8), tokens(1, 2, 3, 4, 5, 6, 7, 9));
    }

    @Test
    void aChatIsKeyedByItsMessagesWhateverTheOrderOfTheirFields() {
        long one = chat(message("role", "system", "content", "You answer about the handoff of KV caches"),
                message("role", "user", "content", "first"));
        long sameSystemPrompt = chat(message("content", "You answer about the handoff of KV caches", "role",
                "system"), message("role", "user", "content", "second"));
        assertEquals(one, sameSystemPrompt);
        assertNotEquals(one, chat(message("role", "system", "content", "You answer about prefill only"),
                message("role", "user", "content", "first")));
    }

    @Test
    void aRequestWithoutInputHasNoPrefixAndOneWithInputAlwaysHasOne() {
        assertEquals(EndpointChoice.NO_PREFIX, PREFIX.keyOf(GenerateRequest.newBuilder().setModel("m").build()));
        assertNotEquals(EndpointChoice.NO_PREFIX, text(""));
        assertThrows(IllegalArgumentException.class, () -> new PromptPrefix(0, 8));
        assertThrows(IllegalArgumentException.class, () -> new PromptPrefix(16, 0));
    }
}
