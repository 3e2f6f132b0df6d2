package io.handoff.gateway.testing;

import java.util.HashMap;
import java.util.Map;

/**
 * The guarded engine calls' profile with a short guard timeout on probes ({@code handoff.discovery.probe-timeout}
 * one second) and a long one in the connector ({@code probe-timeout-ms} a minute): a probe that does not answer is
 * cut off by the guard alone, as it would be by a connector whose own timeout did not fire.
 */
public class ShortProbeTimeoutProfile extends WireMockEnginesProfile {

    /** Longest wait for one try of a probe under the guard. */
    public static final String PROBE_TIMEOUT = "1s";

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> overrides = new HashMap<>(super.getConfigOverrides());
        overrides.put("handoff.discovery.probe-timeout", PROBE_TIMEOUT);
        overrides.put("handoff.routes." + WireMockEnginesResource.ROUTE + ".options.probe-timeout-ms", "60000");
        return overrides;
    }
}
