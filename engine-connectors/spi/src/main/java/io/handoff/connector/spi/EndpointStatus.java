package io.handoff.connector.spi;

import io.handoff.openengine.v1.EngineRole;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What an engine endpoint says about itself through its native discovery surface.
 *
 * @param healthy          whether it answered its health check
 * @param role             its role where the engine exposes one (vLLM does not)
 * @param models           models it serves
 * @param maxContextLength the longest context it reports, where it reports one
 * @param load             native load figures by name (e.g. {@code running_requests}, {@code kv_usage})
 * @param detail           why it is unhealthy, or what it reported, for operators
 */
public record EndpointStatus(Endpoint endpoint, boolean healthy, Optional<EngineRole> role, List<String> models,
        Optional<Integer> maxContextLength, Map<String, Double> load, String detail) {
}
