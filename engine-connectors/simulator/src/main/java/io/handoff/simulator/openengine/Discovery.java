package io.handoff.simulator.openengine;

import io.handoff.openengine.v1.DeploymentCapacity;
import io.handoff.openengine.v1.EngineRole;
import io.handoff.openengine.v1.HealthCheck;
import io.handoff.openengine.v1.HealthResponse;
import io.handoff.openengine.v1.HealthState;
import io.handoff.openengine.v1.KvConnectorInfo;
import io.handoff.openengine.v1.KvEndpoint;
import io.handoff.openengine.v1.ServerInfo;
import io.handoff.simulator.Role;

/** The static parts of the engine's Control answers. */
final class Discovery {
    static final String ENGINE_NAME = "openengine-sim";
    static final String ENGINE_VERSION = "0.1.0+sim";
    static final int SCHEMA_REVISION = 1;

    private Discovery() {
    }

    static EngineRole role(Role role) {
        switch (role) {
            case PREFILL:
                return EngineRole.ENGINE_ROLE_PREFILL;
            case DECODE:
                return EngineRole.ENGINE_ROLE_DECODE;
            default:
                return EngineRole.ENGINE_ROLE_AGGREGATED;
        }
    }

    /**
     * KvConnectorInfo is static per deployment. Only upstream fields are set: an engine that speaks openengine.v1
     * knows nothing of Handoff's lifecycle additions (fields 100+), so they stay unset.
     */
    static KvConnectorInfo kvConnector(OpenEngineConfig cfg, int transferPort) {
        return KvConnectorInfo.newBuilder().setEnabled(true).setTransferBackend(OpenEngineSimEngine.TRANSFER_PROTOCOL)
            .addLocalEndpoints(KvEndpoint.newBuilder().setHost(cfg.transferHost()).setPort(transferPort)
                .setProtocol(OpenEngineSimEngine.TRANSFER_PROTOCOL))
            .addSupportedProtocols(OpenEngineSimEngine.TRANSFER_PROTOCOL).setSupportsRemotePrefill(true)
            .setSupportsDecodePull(true).setSupportsAbortCleanup(cfg.abortCleanup).setSupportsDrain(false)
            .setSchemaVersion(1).build();
    }

    static ServerInfo serverInfo(OpenEngineConfig cfg, String instanceId, int transferPort) {
        return ServerInfo.newBuilder().setEngineName(ENGINE_NAME).setEngineVersion(ENGINE_VERSION)
            .setEngineRole(role(cfg.role)).setInstanceId(instanceId).addSupportedModels(cfg.model)
            .setKvConnector(kvConnector(cfg, transferPort)).setSchemaRevision(SCHEMA_REVISION)
            .setMinimumClientRevision(1).setSchemaRelease("v1")
            .setCapacity(DeploymentCapacity.newBuilder().setKvBlockSize(cfg.blockSize).setTotalKvBlocks(cfg.totalBlocks)
                .setMaxRunningRequests(cfg.maxRunning))
            .build();
    }

    static HealthResponse health(boolean ready, String detail) {
        HealthState s = ready ? HealthState.HEALTH_STATE_READY : HealthState.HEALTH_STATE_NOT_READY;
        return HealthResponse.newBuilder().setState(s)
            .addChecks(HealthCheck.newBuilder().setName("engine").setState(s).setMessage(detail)).build();
    }
}
