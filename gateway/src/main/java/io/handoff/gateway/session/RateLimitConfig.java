package io.handoff.gateway.session;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithName;

import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * {@code handoff.rate-limits.*}: each tenant's requests and tokens per second. A tenant's own value wins, the
 * default's applies where it has none, and a limit with no rate anywhere does not apply. Example:
 *
 * <pre>
 * handoff.rate-limits.default.requests-per-second=50
 * handoff.rate-limits.tenants.team-a.tokens-per-second=20000
 * handoff.rate-limits.tenants.team-a.token-burst=60000
 * </pre>
 */
@ConfigMapping(prefix = "handoff.rate-limits")
public interface RateLimitConfig {

    /** The limits of every tenant, where its own entry does not say otherwise. */
    @WithName("default")
    Limits defaults();

    /** Tenants by name (as {@code handoff.auth} names them). */
    Map<String, Limits> tenants();

    interface Limits {
        OptionalDouble requestsPerSecond();

        /** Requests at once; one second's worth when unset. */
        OptionalLong requestBurst();

        /** Prompt tokens plus max_tokens a second, corrected by the usage reported. */
        OptionalDouble tokensPerSecond();

        /** Tokens at once; one second's worth when unset. */
        OptionalLong tokenBurst();
    }
}
