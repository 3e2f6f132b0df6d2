package io.handoff.gateway.session;

import io.handoff.connector.spi.ScheduleStyle;

import java.time.Duration;
import java.util.Set;

/**
 * What this deployment promises for sessions: the advertised leases and limits, the schedule styles it can
 * honour and the one it picks when a caller leaves the style unspecified.
 */
public record SessionPolicy(
        Duration defaultLease,
        Duration maxLease,
        Duration tombstoneRetention,
        int maxLivePerTenant,
        ScheduleStyle defaultStyle,
        Set<ScheduleStyle> supportedStyles,
        boolean bypassSupported,
        int maxIdBytes,
        int maxAttributesBytes) {

    public SessionPolicy {
        supportedStyles = Set.copyOf(supportedStyles);
        if (!supportedStyles.contains(defaultStyle)) {
            throw new IllegalArgumentException("handoff.session.default-style " + defaultStyle.configName()
                    + " is not among handoff.session.supported-styles " + supportedStyles);
        }
        if (defaultLease.isNegative() || defaultLease.isZero() || defaultLease.compareTo(maxLease) > 0) {
            throw new IllegalArgumentException("handoff.session.default-lease must be positive and at most "
                    + "handoff.session.max-lease");
        }
    }
}
