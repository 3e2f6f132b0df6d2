package io.handoff.connector.spi;

import com.google.protobuf.Value;
import io.handoff.openengine.v1.GenerateRequest;

/**
 * The input forms an engine family accepts, and which one a request uses ({@link #of}). A connector lists the forms
 * it carries in {@link ConnectorCapabilities#inputs()}; the gateway refuses a request in any other form before
 * anything is allocated.
 */
public enum InputKind {
    /** {@code prompt}: text the engine tokenizes as it is. */
    TEXT,
    /** {@code token_ids}: the prompt already tokenized. */
    TOKEN_IDS,
    /**
     * A chat: no {@code prompt} or {@code token_ids}, and {@code extra.messages} holds the conversation as an OpenAI
     * chat {@code messages} list. The engine applies its own chat template (the gateway has no tokenizer and no
     * templates), so a connector that carries chat sends it to the engine's chat endpoint, with the other chat
     * fields of {@code extra} ({@code chat_template_kwargs}, {@code response_format}, ...) beside it.
     */
    CHAT_MESSAGES;

    /** The {@code extra} key that holds the messages of a chat. */
    public static final String MESSAGES = "messages";

    /** The input form of a request, or null when it has none (no prompt, no token ids, no messages). */
    public static InputKind of(GenerateRequest request) {
        return switch (request.getInputCase()) {
            case PROMPT -> TEXT;
            case TOKEN_IDS -> TOKEN_IDS;
            default -> request.hasExtra() && request.getExtra().containsFields(MESSAGES) ? CHAT_MESSAGES : null;
        };
    }

    /** Whether the request is a chat ({@link #CHAT_MESSAGES}). */
    public static boolean isChat(GenerateRequest request) {
        return of(request) == CHAT_MESSAGES;
    }

    /** The messages of a chat request, or null when the request is not a chat. */
    public static Value messages(GenerateRequest request) {
        return isChat(request) ? request.getExtra().getFieldsOrThrow(MESSAGES) : null;
    }
}
