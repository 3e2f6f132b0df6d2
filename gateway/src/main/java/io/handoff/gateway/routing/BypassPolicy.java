package io.handoff.gateway.routing;

import com.google.protobuf.Value;
import io.handoff.connector.spi.InputKind;
import io.handoff.openengine.v1.GenerateRequest;

import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.Set;

/**
 * When a route sends a request straight to a decode endpoint that prefills locally. Text prompts are measured
 * without a tokenizer, estimated at {@value #BYTES_PER_TOKEN} UTF-8 bytes per token; token-id prompts are counted
 * exactly, so a client that needs an exact threshold sends token ids. A chat is measured by the text of its
 * messages, at the same rate (the engine's template adds a few tokens more).
 *
 * <p>{@link Trigger#UNCACHED_PROMPT} is not listed in {@code bypass.when}: setting its threshold
 * ({@code bypass.uncached-prompt-tokens}) turns it on. It bypasses when the decode endpoint chosen for the request
 * would prefill at most that many tokens itself, the rest of the prompt being (by {@link DecodeCacheEstimate}'s
 * estimate) in that endpoint's prefix cache already.
 *
 * @param triggers             the conditions that bypass; empty means never
 * @param shortPromptTokens    the threshold of {@link Trigger#SHORT_PROMPT}
 * @param uncachedPromptTokens the threshold of {@link Trigger#UNCACHED_PROMPT}; 0 when it is off
 * @param decodeCacheTokens    the prompt tokens a decode endpoint is assumed to keep in its prefix cache
 */
public record BypassPolicy(Set<Trigger> triggers, int shortPromptTokens, int uncachedPromptTokens,
        int decodeCacheTokens) {

    public static final int BYTES_PER_TOKEN = 4;

    /** The documented default of {@code bypass.decode-cache-tokens}. */
    static final String DEFAULT_DECODE_CACHE_TOKENS = "262144";

    public enum Trigger {
        ALWAYS, EXPLICIT, SHORT_PROMPT, PREFILL_UNAVAILABLE, UNCACHED_PROMPT;

        /** The trigger's name in configuration, in the bypass metric and on the request's span. */
        public String configName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    public static final BypassPolicy NEVER = new BypassPolicy(Set.of(), 0);

    public BypassPolicy {
        triggers = triggers.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(triggers));
    }

    /** A policy without the uncached-prompt trigger, the decode cache estimated at its default size. */
    public BypassPolicy(Set<Trigger> triggers, int shortPromptTokens) {
        this(triggers, shortPromptTokens, 0, Integer.parseInt(DEFAULT_DECODE_CACHE_TOKENS));
    }

    /** Parses {@code handoff.routes.<name>.bypass.when}; the message names the route and the bad value. */
    public static BypassPolicy parse(String route, List<String> when, int shortPromptTokens) {
        return parse(route, when, shortPromptTokens, OptionalInt.empty(),
                Integer.parseInt(DEFAULT_DECODE_CACHE_TOKENS));
    }

    /**
     * Parses {@code bypass.when}, and {@code bypass.uncached-prompt-tokens}, which turns the uncached-prompt trigger
     * on when set. The message names the route and the bad value; the decode cache's size is checked against the
     * route's block size when the route is negotiated ({@link RouteFactory}).
     */
    public static BypassPolicy parse(String route, List<String> when, int shortPromptTokens,
            OptionalInt uncachedPromptTokens, int decodeCacheTokens) {
        Set<Trigger> triggers = EnumSet.noneOf(Trigger.class);
        for (String raw : when) {
            String value = raw.trim().toLowerCase(Locale.ROOT);
            if (value.equals("never")) {
                continue;
            }
            if (value.equals(Trigger.UNCACHED_PROMPT.configName())) {
                throw new IllegalArgumentException("route " + route + ": bypass.when '" + raw + "': the "
                        + "uncached-prompt trigger is turned on by setting bypass.uncached-prompt-tokens, not by "
                        + "bypass.when");
            }
            try {
                triggers.add(Trigger.valueOf(value.toUpperCase(Locale.ROOT).replace('-', '_')));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("route " + route + ": bypass.when '" + raw + "' is not one of never, "
                        + "always, explicit, short-prompt, prefill-unavailable");
            }
        }
        if (when.stream().anyMatch(w -> w.trim().equalsIgnoreCase("never")) && !triggers.isEmpty()) {
            throw new IllegalArgumentException("route " + route + ": bypass.when 'never' cannot be combined with "
                    + triggers.stream().map(Trigger::configName).toList());
        }
        if (triggers.contains(Trigger.SHORT_PROMPT) && shortPromptTokens <= 0) {
            throw new IllegalArgumentException("route " + route + ": bypass.when short-prompt needs "
                    + "bypass.short-prompt-tokens above 0");
        }
        if (uncachedPromptTokens.isPresent()) {
            if (uncachedPromptTokens.getAsInt() < 1) {
                throw new IllegalArgumentException("route " + route + ": bypass.uncached-prompt-tokens "
                        + uncachedPromptTokens.getAsInt() + " must be at least 1 (unset it to turn the trigger off)");
            }
            triggers.add(Trigger.UNCACHED_PROMPT);
        }
        return new BypassPolicy(triggers, shortPromptTokens, uncachedPromptTokens.orElse(0), decodeCacheTokens);
    }

    public boolean never() {
        return triggers.isEmpty();
    }

    public boolean has(Trigger trigger) {
        return triggers.contains(trigger);
    }

    /** The prompt's length in tokens: exact for token ids, estimated for text and for a chat's messages. */
    public static int promptTokens(GenerateRequest request) {
        if (request.hasTokenIds()) {
            return request.getTokenIds().getIdsCount();
        }
        long bytes = InputKind.isChat(request)
                ? textBytes(InputKind.messages(request))
                : request.getPrompt().getBytes(StandardCharsets.UTF_8).length;
        return (int) Math.min(Integer.MAX_VALUE, (bytes + BYTES_PER_TOKEN - 1) / BYTES_PER_TOKEN);
    }

    /** The UTF-8 bytes of every string in a value (a chat's contents, roles and text parts). */
    private static long textBytes(Value value) {
        return switch (value.getKindCase()) {
            case STRING_VALUE -> value.getStringValue().getBytes(StandardCharsets.UTF_8).length;
            case LIST_VALUE -> value.getListValue().getValuesList().stream().mapToLong(BypassPolicy::textBytes).sum();
            case STRUCT_VALUE -> value.getStructValue().getFieldsMap().values().stream()
                    .mapToLong(BypassPolicy::textBytes).sum();
            default -> 0;
        };
    }
}
