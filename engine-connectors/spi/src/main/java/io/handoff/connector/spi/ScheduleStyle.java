package io.handoff.connector.spi;

import io.handoff.openengine.v1.KvScheduleStyle;

import java.util.Locale;
import java.util.Optional;

/** How the two legs of a handoff are ordered. Bypass is a transfer disposition, not a style. */
public enum ScheduleStyle {
    /** Prefill first; the decode attaches to the KV it parked. */
    CONTEXT_FIRST,
    /** The decode is admitted first as a rendezvous; the prefill then fills the same session. */
    GENERATION_FIRST,
    /** Both legs start at once with one shared reference; a not-yet-ready peer is not a failure. */
    CONCURRENT;

    /** Spelled once: metrics, spans and the request log name the style of every request. */
    private final String configName = name().toLowerCase(Locale.ROOT).replace('_', '-');

    /** The spelling used in configuration and documentation, e.g. {@code context-first}. */
    public String configName() {
        return configName;
    }

    public static ScheduleStyle fromConfigName(String value) {
        return valueOf(value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
    }

    /** The style as openengine.v1 spells it. */
    public KvScheduleStyle wire() {
        return switch (this) {
            case CONTEXT_FIRST -> KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST;
            case GENERATION_FIRST -> KvScheduleStyle.KV_SCHEDULE_STYLE_GENERATION_FIRST;
            case CONCURRENT -> KvScheduleStyle.KV_SCHEDULE_STYLE_CONCURRENT;
        };
    }

    /**
     * The style an openengine.v1 value names; empty for UNSPECIFIED (the caller's default applies).
     *
     * @throws IllegalArgumentException for a value this schema revision does not know
     */
    public static Optional<ScheduleStyle> ofWire(KvScheduleStyle style) {
        return switch (style) {
            case KV_SCHEDULE_STYLE_UNSPECIFIED -> Optional.empty();
            case KV_SCHEDULE_STYLE_CONTEXT_FIRST -> Optional.of(CONTEXT_FIRST);
            case KV_SCHEDULE_STYLE_GENERATION_FIRST -> Optional.of(GENERATION_FIRST);
            case KV_SCHEDULE_STYLE_CONCURRENT -> Optional.of(CONCURRENT);
            case UNRECOGNIZED -> throw new IllegalArgumentException("unknown schedule style " + style);
        };
    }
}
