package io.handoff.gateway.routing;

import java.util.List;
import java.util.Locale;

/**
 * What a reload did. Refused, nothing changed and {@link #generation()} is the table still serving; applied, it is
 * the new table's; unchanged (every route as it already was), no new table was made.
 *
 * @param reason   why it was refused, naming the route and setting (empty otherwise)
 * @param added    routes the reload made that the table did not have
 * @param changed  routes replaced by a changed route of the same name
 * @param removed  routes the reload took out
 */
public record RouteReload(Outcome outcome, long generation, String reason, List<String> added, List<String> changed,
        List<String> removed) {

    public enum Outcome {
        APPLIED, UNCHANGED, REFUSED;

        /** The metric's tag and the admin answer's word. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public RouteReload {
        added = List.copyOf(added);
        changed = List.copyOf(changed);
        removed = List.copyOf(removed);
    }

    static RouteReload refused(long generation, String reason) {
        return new RouteReload(Outcome.REFUSED, generation, reason, List.of(), List.of(), List.of());
    }

    public boolean refused() {
        return outcome == Outcome.REFUSED;
    }
}
