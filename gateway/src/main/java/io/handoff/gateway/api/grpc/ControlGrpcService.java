package io.handoff.gateway.api.grpc;

import io.handoff.gateway.api.openengine.KvSessionMessages;
import io.handoff.gateway.session.SessionPolicy;
import io.handoff.openengine.v1.AbortRequest;
import io.handoff.openengine.v1.AbortResponse;
import io.handoff.openengine.v1.Control;
import io.handoff.openengine.v1.EngineRole;
import io.handoff.openengine.v1.GetKvEventSourcesRequest;
import io.handoff.openengine.v1.GetKvEventSourcesResponse;
import io.handoff.openengine.v1.GetLoadRequest;
import io.handoff.openengine.v1.GetModelInfoRequest;
import io.handoff.openengine.v1.GetServerInfoRequest;
import io.handoff.openengine.v1.HealthRequest;
import io.handoff.openengine.v1.HealthResponse;
import io.handoff.openengine.v1.KvConnectorInfo;
import io.handoff.openengine.v1.KvSessionLimits;
import io.handoff.openengine.v1.ListLorasRequest;
import io.handoff.openengine.v1.ListLorasResponse;
import io.handoff.openengine.v1.LoadInfo;
import io.handoff.openengine.v1.LoadLoraRequest;
import io.handoff.openengine.v1.LoadLoraResponse;
import io.handoff.openengine.v1.ModelInfo;
import io.handoff.openengine.v1.ServerInfo;
import io.handoff.openengine.v1.SubscribeKvEventsRequest;
import io.handoff.openengine.v1.SubscribeKvEventsResponse;
import io.handoff.openengine.v1.UnloadLoraRequest;
import io.handoff.openengine.v1.UnloadLoraResponse;
import io.handoff.gateway.runtime.ReplicaIdentity;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;

/**
 * openengine.v1.Control. GetServerInfo advertises the KV session lifecycle this deployment offers; the fleet
 * views (model info, load, health, abort) come with routes, and LoRA and KV events are engine matters a gateway
 * does not own.
 */
@GrpcService
public class ControlGrpcService implements Control {

    /** Our wire revision of openengine.v1 plus the KV session additions. */
    static final int SCHEMA_REVISION = 1;

    private final SessionPolicy policy;
    private final ReplicaIdentity replica;

    public ControlGrpcService(SessionPolicy policy, ReplicaIdentity replica) {
        this.policy = policy;
        this.replica = replica;
    }

    @Override
    public Uni<ServerInfo> getServerInfo(GetServerInfoRequest request) {
        KvConnectorInfo.Builder kv = KvConnectorInfo.newBuilder()
                .setEnabled(true)
                .setTransferBackend("handoff")
                .setSupportsCallerAllocation(true)
                .setSupportsRenewableLeases(true)
                .setSupportsExplicitRelease(true)
                .setSupportsConditionalBypass(policy.bypassSupported())
                .setSupportsSessionLookup(true)
                .setSessionLimits(KvSessionLimits.newBuilder()
                        .setDefaultLease(KvSessionMessages.duration(policy.defaultLease()))
                        .setMaxLease(KvSessionMessages.duration(policy.maxLease()))
                        .setTombstoneRetention(KvSessionMessages.duration(policy.tombstoneRetention()))
                        .setMaxLiveSessionsPerTenant(policy.maxLivePerTenant())
                        .setMaxIdempotencyKeyBytes(policy.maxIdBytes())
                        .setMaxAttributesBytes(policy.maxAttributesBytes()));
        policy.supportedStyles().stream().sorted().map(KvSessionMessages::toProto)
                .forEach(kv::addSupportedScheduleStyles);
        return Uni.createFrom().item(ServerInfo.newBuilder()
                .setEngineName("handoff")
                .setEngineVersion(version())
                .setEngineRole(EngineRole.ENGINE_ROLE_UNSPECIFIED)
                .setInstanceId(replica.id())
                .setKvConnector(kv)
                .setSchemaRevision(SCHEMA_REVISION)
                .setMinimumClientRevision(1)
                .setSchemaRelease("openengine.v1+handoff-kv")
                .build());
    }

    private static String version() {
        String v = ControlGrpcService.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }

    @Override
    public Uni<ModelInfo> getModelInfo(GetModelInfoRequest request) {
        return Uni.createFrom().failure(Unimplemented.rpc("Control/GetModelInfo", "no routes are configured yet"));
    }

    @Override
    public Uni<LoadInfo> getLoad(GetLoadRequest request) {
        return Uni.createFrom().failure(Unimplemented.rpc("Control/GetLoad", "no routes are configured yet"));
    }

    @Override
    public Uni<HealthResponse> health(HealthRequest request) {
        return Uni.createFrom().failure(Unimplemented.rpc("Control/Health", "use /q/health until routes exist"));
    }

    @Override
    public Uni<AbortResponse> abort(AbortRequest request) {
        return Uni.createFrom().failure(Unimplemented.rpc("Control/Abort", "no requests are run by this build yet"));
    }

    @Override
    public Uni<LoadLoraResponse> loadLora(LoadLoraRequest request) {
        return Uni.createFrom().failure(Unimplemented.rpc("Control/LoadLora", "adapters are managed on the engines"));
    }

    @Override
    public Uni<UnloadLoraResponse> unloadLora(UnloadLoraRequest request) {
        return Uni.createFrom().failure(Unimplemented.rpc("Control/UnloadLora",
                "adapters are managed on the engines"));
    }

    @Override
    public Uni<ListLorasResponse> listLoras(ListLorasRequest request) {
        return Uni.createFrom().failure(Unimplemented.rpc("Control/ListLoras", "adapters are managed on the engines"));
    }

    @Override
    public Uni<GetKvEventSourcesResponse> getKvEventSources(GetKvEventSourcesRequest request) {
        return Uni.createFrom().failure(Unimplemented.rpc("Control/GetKvEventSources",
                "KV cache events are published by the engines themselves"));
    }

    @Override
    public Multi<SubscribeKvEventsResponse> subscribeKvEvents(SubscribeKvEventsRequest request) {
        return Multi.createFrom().failure(Unimplemented.rpc("Control/SubscribeKvEvents",
                "KV cache events are published by the engines themselves"));
    }
}
