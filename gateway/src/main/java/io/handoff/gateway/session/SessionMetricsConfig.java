package io.handoff.gateway.session;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;

/** {@code handoff.metrics.*}: how the gateway samples what its metrics report. */
@ConfigMapping(prefix = "handoff.metrics")
public interface SessionMetricsConfig {

    /** How often the sessions in the store are counted by state (never on a scrape). */
    @WithDefault("10s")
    Duration stateSamplePeriod();
}
