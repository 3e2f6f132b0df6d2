package io.handoff.gateway.routing;

import io.handoff.connector.spi.EndpointStatus;
import io.handoff.openengine.v1.EngineRole;

import java.util.Locale;
import java.util.Optional;

/**
 * What the gateway itself checks in every probe of an endpoint, on top of the connector's own verdict: the role it
 * answers as fits the pool it is in, and it serves the route's engine model. Either is checked only where the engine
 * reports it (vLLM and TensorRT-LLM do not expose their P/D role over HTTP). A mismatch makes the probe unhealthy,
 * with a message that says what the endpoint answered and what the route expects, so the endpoint's breaker stays
 * open and Health shows why.
 */
public final class EndpointVerdict {

    /** The message prefixes of the two mismatches, as Health and the metrics show them. */
    public static final String WRONG_ROLE = "wrong role";
    public static final String WRONG_MODEL = "wrong model";

    private EndpointVerdict() {
    }

    /** The probe as the pool sees it: the connector's status, made unhealthy by a mismatch. */
    public static EndpointStatus judge(RouteSettings route, EngineRole expected, EndpointStatus status) {
        Optional<String> mismatch = mismatch(route, expected, status);
        if (mismatch.isEmpty()) {
            return status;
        }
        return new EndpointStatus(status.endpoint(), false, status.role(), status.models(),
                status.maxContextLength(), status.load(), mismatch.get() + "; " + status.detail());
    }

    static Optional<String> mismatch(RouteSettings route, EngineRole expected, EndpointStatus status) {
        EngineRole role = status.role().orElse(EngineRole.ENGINE_ROLE_UNSPECIFIED);
        if (role != EngineRole.ENGINE_ROLE_UNSPECIFIED && role != EngineRole.UNRECOGNIZED && role != expected) {
            return Optional.of(WRONG_ROLE + ": endpoint " + status.endpoint().name() + " answers as " + name(role)
                    + " but is in the " + pool(expected) + " pool of route " + route.name() + ", which needs "
                    + name(expected));
        }
        if (!status.models().isEmpty() && !status.models().contains(route.engineModel())) {
            return Optional.of(WRONG_MODEL + ": endpoint " + status.endpoint().name() + " does not serve model '"
                    + route.engineModel() + "' of route " + route.name() + " (it serves " + status.models() + ")");
        }
        return Optional.empty();
    }

    /** The kind of mismatch a probe detail starts with, or empty: for metrics. */
    public static Optional<String> kindOf(String detail) {
        if (detail == null) {
            return Optional.empty();
        }
        if (detail.startsWith(WRONG_ROLE)) {
            return Optional.of("role");
        }
        if (detail.startsWith(WRONG_MODEL)) {
            return Optional.of("model");
        }
        return Optional.empty();
    }

    /** The verdict alone, without the connector's detail that {@link #judge} appends after it. */
    public static String headline(String detail) {
        int end = detail.indexOf("; ");
        return end < 0 ? detail : detail.substring(0, end);
    }

    public static String name(EngineRole role) {
        return role.name().replace("ENGINE_ROLE_", "");
    }

    private static String pool(EngineRole role) {
        return name(role).toLowerCase(Locale.ROOT);
    }
}
