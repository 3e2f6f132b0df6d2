package io.handoff.gateway.telemetry;

/** The legs a request runs on engines, each traced as one CLIENT span named {@code handoff.leg <name>}. */
public enum TracedLeg {
    /** The prefill on a prefill endpoint ({@code EngineConnector.prefill}). */
    PREFILL("prefill"),
    /** The decode on a decode endpoint ({@code EngineConnector.decode}); one span per attempt. */
    DECODE("decode"),
    /** A bypass: one decode endpoint prefills locally ({@code EngineConnector.decodeLocally}). */
    BYPASS("bypass");

    private final String wireName;

    TracedLeg(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }
}
