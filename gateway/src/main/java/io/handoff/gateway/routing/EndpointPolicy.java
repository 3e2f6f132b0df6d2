package io.handoff.gateway.routing;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The endpoint choice a pool is configured with ({@code prefill-policy}, {@code decode-policy}). */
public enum EndpointPolicy {
    LEAST_OUTSTANDING, POWER_OF_TWO, PREFIX_AFFINITY;

    static final String DEFAULT = "least-outstanding";

    public String configName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** Parses a configured name; the message names the route, the key and the names allowed. */
    static EndpointPolicy parse(String route, String key, String value) {
        for (EndpointPolicy p : values()) {
            if (p.configName().equals(value.trim())) {
                return p;
            }
        }
        throw new IllegalArgumentException("route " + route + ": " + key + " '" + value + "' is not one of "
                + Arrays.stream(values()).map(EndpointPolicy::configName).collect(Collectors.joining(", ")));
    }

    /** A fresh choice of this policy for one pool. */
    EndpointChoice create(double loadBound) {
        return switch (this) {
            case LEAST_OUTSTANDING -> new LeastOutstanding();
            case POWER_OF_TWO -> new PowerOfTwo();
            case PREFIX_AFFINITY -> new PrefixAffinity(loadBound);
        };
    }
}
