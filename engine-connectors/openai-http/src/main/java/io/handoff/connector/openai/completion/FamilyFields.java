package io.handoff.connector.openai.completion;

import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.GenerateRequest;

import java.util.Set;
import java.util.TreeSet;

/**
 * What one family carries of a request: the field paths it turns into its engines' bodies and the {@code extra} keys
 * it passes through, for a completion and for a chat. The checks here are the ones every family makes the same way;
 * the value rules a family adds run between them, in the family's own order.
 */
public final class FamilyFields {

    /** Fields the gateway itself consumes (identity, session, style); no family sends them to its engines. */
    public static final Set<String> GATEWAY = Set.of("request_id", "kv.session", "kv.transfer_disposition",
            "kv.schedule_style");

    private final String family;
    private final Set<String> accepted;
    private final Set<String> extraKeys;
    private final Set<String> chatExtraKeys;

    /**
     * @param carried       field paths that become part of the family's bodies
     * @param extraKeys     {@code extra} keys passed through on a completion
     * @param chatExtraKeys {@code extra} keys a chat passes besides {@code extraKeys}
     */
    public FamilyFields(String family, Set<String> carried, Set<String> extraKeys, Set<String> chatExtraKeys) {
        this.family = family;
        Set<String> all = new TreeSet<>(carried);
        all.addAll(GATEWAY);
        this.accepted = Set.copyOf(all);
        this.extraKeys = extraKeys;
        this.chatExtraKeys = chatExtraKeys;
    }

    /**
     * Refuses a request that sets a field the family does not carry, and a chat the engines could not take as it is
     * (see {@link ChatRequests#check}).
     */
    public void refuseUncarried(GenerateRequest request) {
        RequestFieldPaths.refuseOthers(request, accepted, family);
        ChatRequests.check(request, family);
    }

    /** Refuses an {@code extra} key the family does not pass for this request (a completion's or a chat's). */
    public void refuseUncarriedExtra(GenerateRequest request) {
        Set<String> passed = ChatRequests.extraKeys(request, extraKeys, chatExtraKeys);
        for (String key : request.getExtra().getFieldsMap().keySet()) {
            if (!passed.contains(key)) {
                throw EngineException.unsupported("extra." + key + " is not carried by " + family + " (carried: "
                        + String.join(", ", new TreeSet<>(passed)) + ")");
            }
        }
    }

    /** Refuses, before anything is sent, a {@code guided.json_schema} that is not JSON. */
    public static void requireJsonSchema(GenerateRequest request) {
        if (request.hasGuided() && request.getGuided().hasJsonSchema()) {
            try {
                Json.parse(request.getGuided().getJsonSchema());
            } catch (IllegalArgumentException e) {
                throw EngineException.invalid("guided.json_schema is not JSON");
            }
        }
    }
}
