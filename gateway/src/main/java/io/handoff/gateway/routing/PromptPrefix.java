package io.handoff.gateway.routing;

import com.google.protobuf.Value;
import io.handoff.connector.spi.InputKind;
import io.handoff.openengine.v1.GenerateRequest;

import java.util.Map;
import java.util.TreeMap;

/**
 * The key {@code prefix-affinity} follows: a 64-bit hash of the prompt's first {@code blocks} blocks of
 * {@code blockTokens} tokens. Token ids are hashed exactly. The gateway has no tokenizer, so a text prompt is hashed
 * by its first {@code blocks x blockTokens x} {@value #CHARS_PER_TOKEN} characters (the rate the bypass estimate
 * uses), and a chat by the text of its messages in order (the fields of a message by name, so that their order on
 * the wire does not matter). A prompt shorter than that is hashed whole. The same prompt sent once as text and once
 * as token ids has two keys: each is still stable from request to request, which is all affinity needs.
 *
 * <p>Only the first blocks count, not the longest cached prefix: a shared system prompt or document is what makes
 * prefix caching pay, and a fixed window finds it with one hash per request and no shared tree to keep. Prompts that
 * agree on the window but not beyond share an endpoint without sharing much cache; the load bound keeps that from
 * overloading it.
 *
 * @param blockTokens tokens per block ({@code prefix-affinity.block-tokens}); 16 is vLLM's and SGLang's page size
 * @param blocks      blocks hashed ({@code prefix-affinity.blocks})
 */
public record PromptPrefix(int blockTokens, int blocks) {

    public static final int CHARS_PER_TOKEN = BypassPolicy.BYTES_PER_TOKEN;

    /** The documented defaults of {@code prefix-affinity.block-tokens} and {@code prefix-affinity.blocks}. */
    static final PromptPrefix DEFAULT = new PromptPrefix(Integer.parseInt(RouteSettings.DEFAULT_PREFIX_BLOCK_TOKENS),
            Integer.parseInt(RouteSettings.DEFAULT_PREFIX_BLOCKS));

    /** FNV-1a's parameters, shared with {@link PromptBlocks} so that both hash a prompt alike. */
    static final long FNV_OFFSET = 0xcbf29ce484222325L;
    static final long FNV_PRIME = 0x100000001b3L;

    public PromptPrefix {
        if (blockTokens < 1 || blocks < 1) {
            throw new IllegalArgumentException("block-tokens and blocks must be at least 1");
        }
    }

    /** The request's key, never {@link EndpointChoice#NO_PREFIX}, or that when the request has no input at all. */
    public long keyOf(GenerateRequest request) {
        long tokens = (long) blockTokens * blocks;
        long h = FNV_OFFSET;
        switch (request.getInputCase()) {
            case TOKEN_IDS -> {
                int n = (int) Math.min(tokens, request.getTokenIds().getIdsCount());
                for (int i = 0; i < n; i++) {
                    h = (h ^ request.getTokenIds().getIds(i)) * FNV_PRIME;
                }
            }
            case PROMPT -> h = chars(h, request.getPrompt(), (int) Math.min(Integer.MAX_VALUE, tokens
                    * CHARS_PER_TOKEN));
            default -> {
                Value messages = InputKind.messages(request);
                if (messages == null) {
                    return EndpointChoice.NO_PREFIX;
                }
                Budget budget = new Budget(h, tokens * CHARS_PER_TOKEN);
                budget.take(messages);
                h = budget.hash;
            }
        }
        return nonZero(mix(h));
    }

    /** Hashes a name (a ring point) the way text prompts are hashed. */
    static long hashOf(String text) {
        return nonZero(mix(chars(FNV_OFFSET, text, text.length())));
    }

    private static long chars(long h, String text, int limit) {
        int n = Math.min(limit, text.length());
        for (int i = 0; i < n; i++) {
            h = (h ^ text.charAt(i)) * FNV_PRIME;
        }
        return h;
    }

    /** The finaliser of SplitMix64: FNV's low bits alone spread poorly over a ring. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    private static long nonZero(long h) {
        return h == EndpointChoice.NO_PREFIX ? 1L : h;
    }

    /** Hashes the strings of a chat's messages in order until the character budget is spent. */
    private static final class Budget {
        long hash;
        long left;

        Budget(long hash, long left) {
            this.hash = hash;
            this.left = left;
        }

        void take(Value value) {
            if (left <= 0) {
                return;
            }
            switch (value.getKindCase()) {
                case STRING_VALUE -> {
                    String s = value.getStringValue();
                    int n = (int) Math.min(left, s.length());
                    hash = chars(hash, s, n);
                    hash = (hash ^ 0x1F) * FNV_PRIME; // a separator: ["ab", "c"] is not ["a", "bc"]
                    left -= n;
                }
                case LIST_VALUE -> value.getListValue().getValuesList().forEach(this::take);
                case STRUCT_VALUE -> {
                    for (Map.Entry<String, Value> field : new TreeMap<>(value.getStructValue().getFieldsMap())
                            .entrySet()) {
                        hash = chars(hash, field.getKey(), field.getKey().length());
                        take(field.getValue());
                    }
                }
                default -> {
                }
            }
        }
    }
}
