package io.handoff.gateway.session;

import io.handoff.connector.spi.ScheduleStyle;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/** {@code handoff.session.*}: leases, limits and styles this deployment advertises. */
@ConfigMapping(prefix = "handoff.session")
public interface SessionConfig {

    /** Lease granted when a caller asks for none. */
    @WithDefault("30s")
    Duration defaultLease();

    /** The longest lease a caller may ask for, per allocation or renewal. */
    @WithDefault("10m")
    Duration maxLease();

    /** How long a terminal session stays queryable and its idempotency key answered. */
    @WithDefault("10m")
    Duration tombstoneRetention();

    /** Live sessions one tenant may hold at once. */
    @WithDefault("10000")
    int maxLivePerTenant();

    /** The style taken when a caller leaves it unspecified. */
    @WithDefault("context-first")
    String defaultStyle();

    /** Styles callers may ask for explicitly. */
    @WithDefault("context-first,generation-first,concurrent")
    List<String> supportedStyles();

    /** Whether callers may allocate with transfer disposition BYPASS. */
    @WithDefault("true")
    boolean bypassSupported();

    /** Longest request id, model name, idempotency key or session id, in UTF-8 bytes. */
    @WithDefault("256")
    int maxIdBytes();

    /** Largest attributes Struct, serialised. */
    @WithDefault("65536")
    int maxAttributesBytes();

    default SessionPolicy toPolicy() {
        return new SessionPolicy(defaultLease(), maxLease(), tombstoneRetention(), maxLivePerTenant(),
                ScheduleStyle.fromConfigName(defaultStyle()),
                supportedStyles().stream().map(ScheduleStyle::fromConfigName)
                        .collect(Collectors.toSet()),
                bypassSupported(), maxIdBytes(), maxAttributesBytes());
    }
}
