package io.handoff.connector.spi;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A connector's configuration, taken from one route.
 *
 * @param route        the route's name
 * @param model        the model the route serves, as the engines know it
 * @param prefillPool  the producer endpoints
 * @param decodePool   the consumer endpoints
 * @param options      family-specific settings (e.g. {@code hold-mode=lease}), documented per connector
 */
public record ConnectorConfig(String route, String model, List<Endpoint> prefillPool, List<Endpoint> decodePool,
        Map<String, String> options) {

    public ConnectorConfig {
        prefillPool = List.copyOf(prefillPool);
        decodePool = List.copyOf(decodePool);
        options = Map.copyOf(options);
    }

    public Optional<String> option(String name) {
        return Optional.ofNullable(options.get(name));
    }
}
