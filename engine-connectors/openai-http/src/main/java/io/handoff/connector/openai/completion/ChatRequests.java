package io.handoff.connector.openai.completion;

import com.google.protobuf.Value;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.InputKind;
import io.handoff.openengine.v1.GenerateRequest;

import java.util.Set;
import java.util.TreeSet;

/**
 * Chat on the OpenAI-compatible engine servers: which endpoint a request goes to, and what a chat must look like
 * before it is sent. A chat is a {@code GenerateRequest} with no prompt and {@code extra.messages}
 * ({@link InputKind#CHAT_MESSAGES}); it goes to {@code /v1/chat/completions} on both legs, where the engine applies
 * its own chat template, and its body is built by the same {@link CompletionBodyBuilder} as a completion (the
 * messages and the other chat fields ride in {@code extra}). Its answers are read by the same
 * {@link CompletionEvents}, which reads {@code choices[].delta.content} and {@code choices[].message.content}.
 */
public final class ChatRequests {

    /** The completions endpoint of the OpenAI-compatible servers. */
    public static final String COMPLETIONS_PATH = "/v1/completions";
    /** The chat endpoint of the OpenAI-compatible servers. */
    public static final String CHAT_PATH = "/v1/chat/completions";

    /**
     * Chat fields that ask for tool calls. The answer to them is {@code tool_calls}, not text, and openengine.v1
     * events carry generated text only, so they are refused rather than lost.
     */
    public static final Set<String> TOOL_FIELDS = Set.of("tools", "tool_choice", "functions", "function_call",
            "parallel_tool_calls");

    private ChatRequests() {
    }

    /** Whether the request is a chat. */
    public static boolean isChat(GenerateRequest request) {
        return InputKind.isChat(request);
    }

    /** The endpoint both legs of the request go to. */
    public static String path(GenerateRequest request) {
        return isChat(request) ? CHAT_PATH : COMPLETIONS_PATH;
    }

    /**
     * The {@code extra} keys a family passes for this request: {@code completionKeys} for a completion, and for a
     * chat those plus {@code chatKeys}, the family's chat fields.
     */
    public static Set<String> extraKeys(GenerateRequest request, Set<String> completionKeys, Set<String> chatKeys) {
        if (!isChat(request)) {
            return completionKeys;
        }
        Set<String> all = new TreeSet<>(completionKeys);
        all.addAll(chatKeys);
        return all;
    }

    /**
     * Refuses, before anything is sent, a chat the engines could not take as it is: messages that are not a
     * non-empty list of objects each naming its {@code role}, or tool calls (see {@link #TOOL_FIELDS}). Nothing is
     * checked for a request that is not a chat.
     */
    public static void check(GenerateRequest request, String family) {
        if (!isChat(request)) {
            return;
        }
        Value messages = InputKind.messages(request);
        if (!messages.hasListValue() || messages.getListValue().getValuesCount() == 0) {
            throw EngineException.invalid("extra.messages must be a non-empty list of chat messages");
        }
        int i = 0;
        for (Value message : messages.getListValue().getValuesList()) {
            if (!message.hasStructValue() || !message.getStructValue().getFieldsOrDefault("role",
                    Value.getDefaultInstance()).hasStringValue()) {
                throw EngineException.invalid("extra.messages[" + i + "] must be an object with a string role");
            }
            i++;
        }
        for (String key : request.getExtra().getFieldsMap().keySet()) {
            if (TOOL_FIELDS.contains(key)) {
                throw EngineException.unsupported("extra." + key + ": tool calls are not carried through " + family
                        + " handoffs (openengine.v1 events carry generated text only, so the engine's tool_calls"
                        + " would be lost)");
            }
        }
    }
}
