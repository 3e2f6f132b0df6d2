package io.handoff.connector.openengine;

import io.handoff.connector.spi.AbortMode;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.InputKind;
import io.handoff.connector.spi.ScheduleStyle;
import java.util.Set;

/** The openengine family: engines that already speak openengine.v1 over gRPC. */
public final class OpenEngineConnectorService implements ConnectorService {
    public static final String FAMILY = "openengine";

    @Override
    public String family() {
        return FAMILY;
    }

    @Override
    public ConnectorCapabilities initialise(ConnectorConfig config) {
        return capabilities(OpenEngineOptions.from(config));
    }

    @Override
    public EngineConnector create(ConnectorConfig config, ConnectorContext context) {
        OpenEngineOptions options = OpenEngineOptions.from(config);
        return new OpenEngineConnector(config, options, capabilities(options), context.clock());
    }

    /**
     * Context-first only: the engine's flow is prefill, then decode with the returned ref; nothing else is native.
     * The engine owns the hold: it is its timeout, a decode does not renew it, and it can be ended early only where
     * the engine frees parked KV on Abort(kv_session). A decode that never reached its endpoint may go to another
     * one: the ref names the producer, so any decode engine of the pool can pull it.
     */
    static ConnectorCapabilities capabilities(OpenEngineOptions o) {
        return new ConnectorCapabilities(Set.of(ScheduleStyle.CONTEXT_FIRST), o.hold(), false, o.abortCleanup(),
            AbortMode.ABORT_RPC, true, Set.of(InputKind.TEXT, InputKind.TOKEN_IDS), RequestFields.carried(), true,
            o.maxOutputs());
    }
}
