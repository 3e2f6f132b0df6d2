package io.handoff.gateway.api.grpc;

import io.handoff.gateway.control.AbortService;
import io.handoff.gateway.control.FleetHealth;
import io.handoff.gateway.control.LoadReporter;
import io.handoff.gateway.control.ServerInfoAssembler;
import io.handoff.gateway.tenancy.Caller;
import io.handoff.openengine.v1.AbortRequest;
import io.handoff.openengine.v1.AbortResponse;
import io.handoff.openengine.v1.Control;
import io.handoff.openengine.v1.GetKvEventSourcesRequest;
import io.handoff.openengine.v1.GetKvEventSourcesResponse;
import io.handoff.openengine.v1.GetLoadRequest;
import io.handoff.openengine.v1.GetModelInfoRequest;
import io.handoff.openengine.v1.GetServerInfoRequest;
import io.handoff.openengine.v1.HealthRequest;
import io.handoff.openengine.v1.HealthResponse;
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
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;

/**
 * openengine.v1.Control over the fleet this gateway fronts, a thin adapter over {@code discovery}: GetServerInfo and
 * GetModelInfo advertise what the gateway and the routes' connectors can both do, Health and GetLoad read the fleet
 * as sampled, Abort stops requests and sessions. LoRA and KV events are engine matters a gateway does not own.
 */
@GrpcService
public class ControlGrpcService implements Control {

    private final ServerInfoAssembler info;
    private final FleetHealth health;
    private final LoadReporter load;
    private final AbortService aborts;

    public ControlGrpcService(ServerInfoAssembler info, FleetHealth health, LoadReporter load, AbortService aborts) {
        this.info = info;
        this.health = health;
        this.load = load;
        this.aborts = aborts;
    }

    @Override
    public Uni<ServerInfo> getServerInfo(GetServerInfoRequest request) {
        return Uni.createFrom().item(info::serverInfo);
    }

    @Override
    public Uni<ModelInfo> getModelInfo(GetModelInfoRequest request) {
        return Uni.createFrom().item(() -> info.modelInfo(request.getModel()));
    }

    @Override
    public Uni<LoadInfo> getLoad(GetLoadRequest request) {
        return Uni.createFrom().item(load::load);
    }

    @Override
    public Uni<HealthResponse> health(HealthRequest request) {
        return Uni.createFrom().deferred(() -> health.health(request));
    }

    @Override
    public Uni<AbortResponse> abort(AbortRequest request) {
        Caller caller = GrpcCallerInterceptor.current();
        return Uni.createFrom().deferred(() -> aborts.abort(caller, request));
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
