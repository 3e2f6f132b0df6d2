package io.handoff.gateway.routing;

import com.google.protobuf.Value;
import io.handoff.connector.spi.InputKind;
import io.handoff.openengine.v1.GenerateRequest;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * A prompt as the full blocks of {@code blockTokens} tokens an engine's prefix cache keeps, each named by a chained
 * hash: block i's hash covers blocks 0 to i, so equal hashes at i mean "the same prefix up to the end of block i",
 * as an engine's block hashes do. Hashed as {@link PromptPrefix} hashes (FNV-1a, then SplitMix64's finaliser), with
 * the same block size ({@code prefix-affinity.block-tokens}): token ids exactly; text, having no tokenizer, by
 * {@value PromptPrefix#CHARS_PER_TOKEN} characters a token; a chat by the text of its messages in order (a message's
 * fields by name). A last, partial block is not counted: engines cache full blocks only.
 *
 * <p>{@link #promptTokens()} is the prompt's length as the bypass counts it ({@link BypassPolicy#promptTokens}), so
 * that "uncached tokens" is that length less the tokens of the cached blocks.
 */
public final class PromptBlocks {

    private final int blockTokens;
    private final int promptTokens;
    private final long[] hashes;

    private PromptBlocks(int blockTokens, int promptTokens, long[] hashes) {
        this.blockTokens = blockTokens;
        this.promptTokens = promptTokens;
        this.hashes = hashes;
    }

    /** The request's prompt in blocks of {@code blockTokens} tokens; no blocks when it has no input. */
    public static PromptBlocks of(GenerateRequest request, int blockTokens) {
        if (blockTokens < 1) {
            throw new IllegalArgumentException("block-tokens must be at least 1");
        }
        Chain chain;
        switch (request.getInputCase()) {
            case TOKEN_IDS -> {
                chain = new Chain(blockTokens, request.getTokenIds().getIdsCount() / blockTokens);
                for (int i = 0; i < request.getTokenIds().getIdsCount(); i++) {
                    chain.add(request.getTokenIds().getIds(i));
                }
            }
            case PROMPT -> {
                String prompt = request.getPrompt();
                chain = new Chain(blockTokens * PromptPrefix.CHARS_PER_TOKEN, prompt.length() / (blockTokens
                        * PromptPrefix.CHARS_PER_TOKEN));
                chain.add(prompt);
            }
            default -> {
                chain = new Chain(blockTokens * PromptPrefix.CHARS_PER_TOKEN, 16);
                Value messages = InputKind.messages(request);
                if (messages != null) {
                    chain.add(messages);
                }
            }
        }
        return new PromptBlocks(blockTokens, BypassPolicy.promptTokens(request), chain.hashes());
    }

    public int blockTokens() {
        return blockTokens;
    }

    /** The prompt's length in tokens: exact for token ids, estimated for text and chats. */
    public int promptTokens() {
        return promptTokens;
    }

    /** The number of full blocks. */
    public int count() {
        return hashes.length;
    }

    /** The hash of the prefix that ends with block {@code i}. */
    public long hash(int i) {
        return hashes[i];
    }

    /**
     * Hashes units (token ids, or characters) into one running FNV-1a state, and takes the state, mixed, at the end
     * of each full block: the running state is what chains a block's hash to every block before it.
     */
    private static final class Chain {
        private final int unitsPerBlock;
        private long state = PromptPrefix.FNV_OFFSET;
        private int inBlock;
        private long[] hashes;
        private int count;

        Chain(int unitsPerBlock, int expectedBlocks) {
            this.unitsPerBlock = unitsPerBlock;
            this.hashes = new long[Math.max(1, expectedBlocks)];
        }

        void add(int unit) {
            state = (state ^ unit) * PromptPrefix.FNV_PRIME;
            if (++inBlock == unitsPerBlock) {
                if (count == hashes.length) {
                    hashes = Arrays.copyOf(hashes, count * 2);
                }
                hashes[count++] = PromptPrefix.mix(state);
                inBlock = 0;
            }
        }

        void add(String text) {
            for (int i = 0; i < text.length(); i++) {
                add(text.charAt(i));
            }
        }

        /** A chat's strings in order, each followed by a separator, so that ["ab", "c"] is not ["a", "bc"]. */
        void add(Value value) {
            switch (value.getKindCase()) {
                case STRING_VALUE -> {
                    add(value.getStringValue());
                    add(0x1F);
                }
                case LIST_VALUE -> value.getListValue().getValuesList().forEach(this::add);
                case STRUCT_VALUE -> {
                    for (Map.Entry<String, Value> field : new TreeMap<>(value.getStructValue().getFieldsMap())
                            .entrySet()) {
                        add(field.getKey());
                        add(field.getValue());
                    }
                }
                default -> {
                }
            }
        }

        long[] hashes() {
            return Arrays.copyOf(hashes, count);
        }
    }
}
