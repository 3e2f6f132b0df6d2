package io.handoff.connector.openai.completion;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.util.JsonFormat;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.InputKind;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChatRequestsTest {

    /** A Struct from JSON, as a chat's {@code extra}. */
    static Struct chat(String json) {
        Struct.Builder b = Struct.newBuilder();
        try {
            JsonFormat.parser().merge(json, b);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException(json, e);
        }
        return b.build();
    }

    private static GenerateRequest request(String extra) {
        return GenerateRequest.newBuilder().setModel("m").setExtra(chat(extra)).build();
    }

    @Test
    void aChatIsARequestWithoutPromptWhoseExtraHasMessages() {
        GenerateRequest chat = request("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertEquals(InputKind.CHAT_MESSAGES, InputKind.of(chat));
        assertTrue(ChatRequests.isChat(chat));
        assertEquals("/v1/chat/completions", ChatRequests.path(chat));
        // a prompt wins: extra.messages beside a prompt is an ordinary extra key (and refused by the families)
        GenerateRequest prompted = chat.toBuilder().setPrompt("p").build();
        assertEquals(InputKind.TEXT, InputKind.of(prompted));
        assertEquals("/v1/completions", ChatRequests.path(prompted));
        assertNull(InputKind.of(GenerateRequest.newBuilder().setModel("m").build()));
    }

    @Test
    void chatKeysAreAddedOnlyForAChat() {
        GenerateRequest chat = request("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertEquals(Set.of("user", "messages"), ChatRequests.extraKeys(chat, Set.of("user"), Set.of("messages")));
        assertEquals(Set.of("user"), ChatRequests.extraKeys(GenerateRequest.newBuilder().setPrompt("p").build(),
                Set.of("user"), Set.of("messages")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"messages\":[]}", "{\"messages\":\"hi\"}", "{\"messages\":[\"hi\"]}",
        "{\"messages\":[{\"content\":\"hi\"}]}", "{\"messages\":[{\"role\":1,\"content\":\"hi\"}]}"})
    void malformedMessagesAreRefused(String extra) {
        EngineException e = assertThrows(EngineException.class, () -> ChatRequests.check(request(extra), "f"));
        assertEquals(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, e.code());
        assertFalse(e.sentToEngine());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tools", "tool_choice", "functions", "function_call", "parallel_tool_calls"})
    void toolCallsAreRefusedRatherThanLost(String field) {
        EngineException e = assertThrows(EngineException.class, () -> ChatRequests.check(request(
                "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"" + field + "\":[]}"), "f"));
        assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code());
        assertTrue(e.getMessage().contains(field), e.getMessage());
    }

    @Test
    void aWellFormedConversationPasses() {
        assertDoesNotThrow(() -> ChatRequests.check(request("{\"messages\":[{\"role\":\"system\",\"content\":\"be"
                + " brief\"},{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]},{\"role\":"
                + "\"assistant\",\"content\":null}]}"), "f"));
        assertDoesNotThrow(() -> ChatRequests.check(GenerateRequest.newBuilder().setPrompt("p").build(), "f"));
    }
}
