package io.handoff.gateway.routing;

import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.connector.spi.InputKind;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.TokenIds;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A prompt's blocks: full blocks only, chained so that a block's hash stands for the whole prefix up to it, for
 * token ids, text and chats alike.
 */
class PromptBlocksTest {

    /** Blocks of four tokens: 4 token ids, or 16 characters of text. */
    private static final int BLOCK = 4;

    private static PromptBlocks tokens(int... ids) {
        TokenIds.Builder t = TokenIds.newBuilder();
        IntStream.of(ids).forEach(t::addIds);
        return PromptBlocks.of(GenerateRequest.newBuilder().setTokenIds(t).build(), BLOCK);
    }

    private static PromptBlocks text(String prompt) {
        return PromptBlocks.of(GenerateRequest.newBuilder().setPrompt(prompt).build(), BLOCK);
    }

    private static PromptBlocks chat(Value... messages) {
        return PromptBlocks.of(GenerateRequest.newBuilder().setExtra(Struct.newBuilder().putFields(
                InputKind.MESSAGES, Value.newBuilder().setListValue(ListValue.newBuilder()
                        .addAllValues(List.of(messages))).build())).build(), BLOCK);
    }

    private static Value message(String first, String firstValue, String second, String secondValue) {
        return Value.newBuilder().setStructValue(Struct.newBuilder()
                .putFields(first, Value.newBuilder().setStringValue(firstValue).build())
                .putFields(second, Value.newBuilder().setStringValue(secondValue).build())).build();
    }

    @Test
    void onlyFullBlocksCount() {
        assertEquals(0, tokens(1, 2, 3).count());
        assertEquals(1, tokens(1, 2, 3, 4).count());
        assertEquals(2, tokens(1, 2, 3, 4, 5, 6, 7, 8, 9).count());
        assertEquals(9, tokens(1, 2, 3, 4, 5, 6, 7, 8, 9).promptTokens());
        assertEquals(BLOCK, tokens(1).blockTokens());
        assertEquals(3, text("x".repeat(16 * 3 + 15)).count(), "16 characters a block");
        assertEquals(0, PromptBlocks.of(GenerateRequest.getDefaultInstance(), BLOCK).count(), "no input, no blocks");
    }

    @Test
    void aSharedPrefixHasTheSameLeadingHashesAndADifferenceChangesEveryHashFromItsBlockOn() {
        PromptBlocks a = tokens(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
        PromptBlocks sameStart = tokens(1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0);
        assertEquals(a.hash(0), sameStart.hash(0));
        assertEquals(a.hash(1), sameStart.hash(1));
        assertNotEquals(a.hash(2), sameStart.hash(2));

        // the same tokens in block 2 after a different block 0 are a different prefix, so a different hash
        PromptBlocks otherStart = tokens(0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
        for (int i = 0; i < 3; i++) {
            assertNotEquals(a.hash(i), otherStart.hash(i), "block " + i);
        }
        // the same block content at another position is another prefix too
        PromptBlocks repeated = tokens(1, 2, 3, 4, 1, 2, 3, 4);
        assertNotEquals(repeated.hash(0), repeated.hash(1));
    }

    @Test
    void textIsCutIntoBlocksOfCharactersAndALongerPromptKeepsTheHashesOfItsPrefix() {
        String document = "The gateway hands the prompt's KV from prefill to decode. ".repeat(4);
        PromptBlocks first = text(document + "First question?");
        PromptBlocks second = text(document + "Second, different question?");
        int shared = document.length() / 16;
        for (int i = 0; i < shared; i++) {
            assertEquals(first.hash(i), second.hash(i), "block " + i);
        }
        assertNotEquals(first.hash(shared), second.hash(shared), "the block where the questions begin");
        assertEquals((document.length() + "First question?".length() + 3) / 4, first.promptTokens(),
                "the prompt's length as the bypass counts it");
    }

    @Test
    void aChatIsCutByTheTextOfItsMessagesWhateverTheOrderOfTheirFields() {
        String system = "You answer questions about the attached manual in detail.";
        PromptBlocks roleFirst = chat(message("role", "system", "content", system),
                message("role", "user", "content", "What is a lease?"));
        PromptBlocks contentFirst = chat(message("content", system, "role", "system"),
                message("content", "What is a lease?", "role", "user"));
        assertEquals(roleFirst.count(), contentFirst.count());
        for (int i = 0; i < roleFirst.count(); i++) {
            assertEquals(roleFirst.hash(i), contentFirst.hash(i));
        }
        PromptBlocks otherSystem = chat(message("role", "system", "content", "X" + system.substring(1)),
                message("role", "user", "content", "What is a lease?"));
        assertNotEquals(roleFirst.hash(0), otherSystem.hash(0));
    }

    @Test
    void aBlockSizeBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> PromptBlocks.of(GenerateRequest.newBuilder().setPrompt("p").build(), 0));
    }
}
