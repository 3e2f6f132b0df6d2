package io.handoff.gateway.routing;

import com.google.protobuf.Value;
import io.handoff.connector.spi.InputKind;
import io.handoff.openengine.v1.GenerateRequest;

import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * When a route sends a request straight to a decode endpoint that prefills locally. Text prompts are measured
 * without a tokenizer, estimated at {@value #BYTES_PER_TOKEN} UTF-8 bytes per token; token-id prompts are counted
 * exactly, so a client that needs an exact threshold sends token ids. A chat is measured by the text of its
 * messages, at the same rate (the engine's template adds a few tokens more).
 *
 * @param triggers         the conditions that bypass; empty means never
 * @param shortPromptTokens the threshold of {@link Trigger#SHORT_PROMPT}
 */
public record BypassPolicy(Set<Trigger> triggers, int shortPromptTokens) {

    public static final int BYTES_PER_TOKEN = 4;

    public enum Trigger {
        ALWAYS, EXPLICIT, SHORT_PROMPT, PREFILL_UNAVAILABLE;

        String configName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    public static final BypassPolicy NEVER = new BypassPolicy(Set.of(), 0);

    public BypassPolicy {
        triggers = triggers.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(triggers));
    }

    /** Parses {@code handoff.routes.<name>.bypass.when}; the message names the route and the bad value. */
    public static BypassPolicy parse(String route, List<String> when, int shortPromptTokens) {
        Set<Trigger> triggers = EnumSet.noneOf(Trigger.class);
        for (String raw : when) {
            String value = raw.trim().toLowerCase(Locale.ROOT);
            if (value.equals("never")) {
                continue;
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
        return new BypassPolicy(triggers, shortPromptTokens);
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
