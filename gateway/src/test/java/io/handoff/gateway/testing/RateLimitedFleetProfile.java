package io.handoff.gateway.testing;

import java.util.HashMap;
import java.util.Map;

/**
 * The simulated fleet with the default tenant (every caller: auth is off) rate limited: one request a second, two
 * at once, and 1,000 tokens a second and at once. A profile of its own, so no other fleet test meets the limits.
 */
public class RateLimitedFleetProfile extends SimulatedFleetProfile {

    public static final int REQUEST_BURST = 2;

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> config = new HashMap<>(super.getConfigOverrides());
        config.put("handoff.rate-limits.default.requests-per-second", "1");
        config.put("handoff.rate-limits.default.request-burst", Integer.toString(REQUEST_BURST));
        config.put("handoff.rate-limits.default.tokens-per-second", "1000");
        return config;
    }
}
