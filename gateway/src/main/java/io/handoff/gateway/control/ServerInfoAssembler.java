package io.handoff.gateway.control;

import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.Durations;
import io.grpc.Status;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.InputKind;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.routing.BypassPolicy;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.runtime.ReplicaIdentity;
import io.handoff.gateway.session.SessionPolicy;
import io.handoff.openengine.v1.EngineRole;
import io.handoff.openengine.v1.GenerationCapabilities;
import io.handoff.openengine.v1.KvConnectorInfo;
import io.handoff.openengine.v1.KvSessionLimits;
import io.handoff.openengine.v1.ModelInfo;
import io.handoff.openengine.v1.ServerInfo;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;

/**
 * What this deployment tells a framework before it sends traffic. The rule is intersection: a capability is
 * advertised in {@link ServerInfo#getKvConnector()} only when the gateway offers it (its session policy) AND every
 * route's connector can do it natively as the route is configured, so a framework that trusts ServerInfo is never
 * refused for a capability it was promised, whatever model it sends. With no route, the session lifecycle alone is
 * served and the policy is advertised as it is. The per-model view, which may offer more, is GetModelInfo: the
 * route's own capabilities under {@code extra.kv} and what its engines report.
 */
@ApplicationScoped
public class ServerInfoAssembler {

    /** Our wire revision of openengine.v1 plus the KV session additions. */
    public static final int SCHEMA_REVISION = 1;

    private final SessionPolicy policy;
    private final ReplicaIdentity replica;
    private final RouteRegistry routes;
    private final FleetSampler sampler;

    public ServerInfoAssembler(SessionPolicy policy, ReplicaIdentity replica, RouteRegistry routes,
            FleetSampler sampler) {
        this.policy = policy;
        this.replica = replica;
        this.routes = routes;
        this.sampler = sampler;
    }

    public ServerInfo serverInfo() {
        Collection<Route> all = routes.all();
        Set<ScheduleStyle> styles = EnumSet.noneOf(ScheduleStyle.class);
        styles.addAll(policy.supportedStyles());
        boolean bypass = policy.bypassSupported();
        boolean abortCleanup = true;
        Duration maxLease = policy.maxLease();
        for (Route route : all) {
            styles.retainAll(route.settings().styles());
            bypass &= conditionalBypass(route);
            abortCleanup &= route.capabilities().earlyRelease();
            maxLease = min(maxLease, route.leaseMax());
        }
        KvConnectorInfo.Builder kv = KvConnectorInfo.newBuilder()
                .setEnabled(true)
                .setTransferBackend("handoff")
                // a client never sends kv.session to the gateway: it orchestrates both legs itself
                .setSupportsRemotePrefill(false)
                .setSupportsDecodePull(false)
                .setSupportsAbortCleanup(abortCleanup)
                .setSupportsDrain(true)
                .setSupportsCallerAllocation(true)
                .setSupportsRenewableLeases(true)
                .setSupportsExplicitRelease(true)
                .setSupportsConditionalBypass(bypass)
                .setSupportsSessionLookup(true)
                .setSessionLimits(KvSessionLimits.newBuilder()
                        .setDefaultLease(Durations.fromNanos(min(policy.defaultLease(), maxLease).toNanos()))
                        .setMaxLease(Durations.fromNanos(maxLease.toNanos()))
                        .setTombstoneRetention(Durations.fromNanos(policy.tombstoneRetention().toNanos()))
                        .setMaxLiveSessionsPerTenant(policy.maxLivePerTenant())
                        .setMaxIdempotencyKeyBytes(policy.maxIdBytes())
                        .setMaxAttributesBytes(policy.maxAttributesBytes()));
        styles.stream().sorted().map(ScheduleStyle::wire).forEach(kv::addSupportedScheduleStyles);
        ServerInfo.Builder info = ServerInfo.newBuilder()
                .setEngineName("handoff")
                .setEngineVersion(version())
                .setEngineRole(EngineRole.ENGINE_ROLE_UNSPECIFIED)
                .setInstanceId(replica.id())
                .setKvConnector(kv)
                .setSchemaRevision(SCHEMA_REVISION)
                .setMinimumClientRevision(1)
                .setSchemaRelease("openengine.v1+handoff-kv");
        Set<String> models = new LinkedHashSet<>();
        all.forEach(r -> models.addAll(r.settings().modelNames()));
        info.addAllSupportedModels(models);
        ListValue.Builder perRoute = ListValue.newBuilder();
        all.forEach(r -> perRoute.addValues(Value.newBuilder().setStructValue(routeKv(r))));
        info.setExtra(Struct.newBuilder().putFields("routes", Value.newBuilder().setListValue(perRoute).build()));
        return info.build();
    }

    /**
     * The model's route: its names, what its engines report (the shortest context length any endpoint reports;
     * the prompt forms and outputs its connector carries) and, under {@code extra.kv}, its KV capabilities.
     */
    public ModelInfo modelInfo(String model) {
        Route route;
        if (model.isEmpty()) {
            if (routes.all().size() != 1) {
                throw Status.INVALID_ARGUMENT.withDescription("model is required: this deployment serves "
                        + routes.all().size() + " routes").asRuntimeException();
            }
            route = routes.all().iterator().next();
        } else {
            route = routes.forModel(model).orElseThrow(() -> Status.NOT_FOUND
                    .withDescription("no route serves model '" + model + "'").asRuntimeException());
        }
        ConnectorCapabilities caps = route.capabilities();
        ModelInfo.Builder info = ModelInfo.newBuilder()
                .setModelId(route.settings().engineModel())
                .setServedModelName(route.settings().model())
                .addAllServedModelAliases(route.settings().aliases())
                .setSupportsTextInput(caps.inputs().contains(InputKind.TEXT))
                .setSupportsTokenIdsInput(caps.inputs().contains(InputKind.TOKEN_IDS))
                .setGeneration(GenerationCapabilities.newBuilder().setMaxNumSequences(caps.maxOutputs()));
        reportedContextLength(route).ifPresent(info::setMaxContextLength);
        return info.setExtra(Struct.newBuilder().putFields("kv", Value.newBuilder().setStructValue(routeKv(route))
                .build())).build();
    }

    /**
     * The shortest context any healthy endpoint of the route reported (a request must fit both legs); an endpoint
     * judged unhealthy, e.g. one serving another model, says nothing about this one.
     */
    private Optional<Integer> reportedContextLength(Route route) {
        return sampler.samples().stream()
                .filter(s -> s.route().equals(route.name()) && s.status().healthy())
                .map(s -> s.status().maxContextLength())
                .flatMap(Optional::stream)
                .min(Integer::compare);
    }

    /** A route's own KV capabilities: what its settings enable and its connector can do natively. */
    private Struct routeKv(Route route) {
        ConnectorCapabilities caps = route.capabilities();
        ListValue.Builder styles = ListValue.newBuilder();
        route.settings().styles().stream().filter(policy.supportedStyles()::contains).sorted()
                .forEach(s -> styles.addValues(text(s.wire().name())));
        ListValue.Builder models = ListValue.newBuilder();
        route.settings().modelNames().forEach(m -> models.addValues(text(m)));
        return Struct.newBuilder()
                .putFields("route", text(route.name()))
                .putFields("family", text(route.family()))
                .putFields("models", Value.newBuilder().setListValue(models).build())
                .putFields("supported_schedule_styles", Value.newBuilder().setListValue(styles).build())
                .putFields("default_schedule_style",
                        text(route.settings().defaultStyle().wire().name()))
                .putFields("supports_conditional_bypass", bool(policy.bypassSupported() && conditionalBypass(route)))
                .putFields("supports_abort_cleanup", bool(caps.earlyRelease()))
                .putFields("default_lease_seconds", number(route.leaseDefault().toMillis() / 1000.0))
                .putFields("max_lease_seconds", number(route.leaseMax().toMillis() / 1000.0))
                .putFields("engine_hold_seconds", number(caps.engineHold().toMillis() / 1000.0))
                .build();
    }

    /** A client may ask this route for BYPASS: its decode endpoints prefill locally and its policy accepts asking. */
    static boolean conditionalBypass(Route route) {
        BypassPolicy bypass = route.settings().bypass();
        return route.capabilities().localPrefill()
                && (bypass.has(BypassPolicy.Trigger.EXPLICIT) || bypass.has(BypassPolicy.Trigger.ALWAYS));
    }

    private static Value text(String s) {
        return Value.newBuilder().setStringValue(s).build();
    }

    private static Value bool(boolean b) {
        return Value.newBuilder().setBoolValue(b).build();
    }

    private static Value number(double d) {
        return Value.newBuilder().setNumberValue(d).build();
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private static String version() {
        String v = ServerInfoAssembler.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }
}
