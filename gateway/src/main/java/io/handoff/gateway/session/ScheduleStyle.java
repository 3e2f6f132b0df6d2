package io.handoff.gateway.session;

import java.util.Locale;

/** How the two legs of a handoff are ordered. Bypass is a transfer disposition, not a style. */
public enum ScheduleStyle {
    CONTEXT_FIRST,
    GENERATION_FIRST,
    CONCURRENT;

    /** The spelling used in configuration and documentation, e.g. {@code context-first}. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static ScheduleStyle fromConfigName(String value) {
        return valueOf(value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
    }
}
