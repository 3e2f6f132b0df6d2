package io.handoff.connector.spi;

import java.util.Locale;

/** How the two legs of a handoff are ordered. Bypass is a transfer disposition, not a style. */
public enum ScheduleStyle {
    /** Prefill first; the decode attaches to the KV it parked. */
    CONTEXT_FIRST,
    /** The decode is admitted first as a rendezvous; the prefill then fills the same session. */
    GENERATION_FIRST,
    /** Both legs start at once with one shared reference; a not-yet-ready peer is not a failure. */
    CONCURRENT;

    /** The spelling used in configuration and documentation, e.g. {@code context-first}. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static ScheduleStyle fromConfigName(String value) {
        return valueOf(value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
    }
}
