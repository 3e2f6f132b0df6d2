package io.handoff.gateway.control;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.gateway.control.FleetSampler.EndpointSample;
import io.handoff.gateway.control.FleetSampler.SessionCounts;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.runtime.ReplicaIdentity;
import io.handoff.openengine.v1.LoadInfo;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalDouble;

/**
 * Control.GetLoad from the sampler's cache, never from the engines: the requests this replica runs, the fleet's
 * KV sessions (live ones plus ended ones an engine still holds: {@code active_kv_sessions}), the engines' queues
 * and blocks where they report them, and under {@code attributes} every endpoint's native figures with their age.
 */
@ApplicationScoped
public class LoadReporter {

    private final FleetSampler sampler;
    private final RouteRegistry routes;
    private final ReplicaIdentity replica;
    private final Clock clock;
    private final DiscoveryConfig config;

    public LoadReporter(FleetSampler sampler, RouteRegistry routes, ReplicaIdentity replica, Clock clock,
            DiscoveryConfig config) {
        this.sampler = sampler;
        this.routes = routes;
        this.replica = replica;
        this.clock = clock;
        this.config = config;
    }

    public LoadInfo load() {
        Instant now = clock.instant();
        LoadInfo.Builder load = LoadInfo.newBuilder().setInstanceId(replica.id());
        sampler.lastSample().ifPresent(at -> load.setTimestampUnixNanos(at.getEpochSecond() * 1_000_000_000L
                + at.getNano()));
        load.setRunningRequests(routes.all().stream().mapToInt(r -> r.inFlight().get()).sum());
        Struct.Builder attributes = Struct.newBuilder();
        sampler.sessions().ifPresent(counts -> {
            load.setActiveKvSessions((int) Math.min(Integer.MAX_VALUE, counts.activeKv()));
            attributes.putFields("sessions", Value.newBuilder().setStructValue(sessions(counts, now)).build());
        });
        List<EndpointSample> samples = sampler.samples();
        sum(samples, "waiting_requests").ifPresent(v -> load.setQueuedRequests((int) v));
        sum(samples, "queued_requests").ifPresent(v -> load.setQueuedRequests(load.getQueuedRequests() + (int) v));
        sum(samples, "used_kv_blocks").ifPresent(v -> load.setUsedKvBlocks((long) v));
        sum(samples, "total_kv_blocks").ifPresent(v -> load.setTotalKvBlocks((long) v));
        Struct.Builder perRoute = Struct.newBuilder();
        for (Route route : routes.all()) {
            Struct.Builder pools = Struct.newBuilder();
            for (String pool : List.of("prefill", "decode")) {
                Struct.Builder endpoints = Struct.newBuilder();
                samples.stream().filter(s -> s.route().equals(route.name()) && s.pool().equals(pool))
                        .forEach(s -> endpoints.putFields(s.member().endpoint().name(),
                                Value.newBuilder().setStructValue(endpoint(s, now)).build()));
                pools.putFields(pool, Value.newBuilder().setStructValue(endpoints).build());
            }
            pools.putFields("in_flight", number(route.inFlight().get()));
            perRoute.putFields(route.name(), Value.newBuilder().setStructValue(pools).build());
        }
        attributes.putFields("routes", Value.newBuilder().setStructValue(perRoute).build());
        sampler.lastSample().ifPresent(at -> {
            long age = Duration.between(at, now).toMillis();
            attributes.putFields("sample_age_ms", number(age));
            attributes.putFields("stale", Value.newBuilder().setBoolValue(age > config.staleAfter().toMillis())
                    .build());
        });
        return load.setAttributes(attributes).build();
    }

    private static Struct sessions(SessionCounts counts, Instant now) {
        Struct.Builder byState = Struct.newBuilder();
        counts.byState().forEach((state, n) -> byState.putFields(state.name(), number(n)));
        Struct.Builder out = Struct.newBuilder()
                .putFields("live", number(counts.live()))
                .putFields("engine_held", number(counts.engineHeld()))
                .putFields("by_state", Value.newBuilder().setStructValue(byState).build())
                .putFields("age_ms", number(Duration.between(counts.sampledAt(), now).toMillis()));
        if (counts.error() != null) {
            out.putFields("error", Value.newBuilder().setStringValue(counts.error()).build());
        }
        return out.build();
    }

    private static Struct endpoint(EndpointSample s, Instant now) {
        Struct.Builder figures = Struct.newBuilder();
        s.status().load().forEach((name, value) -> figures.putFields(name, number(value)));
        return Struct.newBuilder()
                .putFields("healthy", Value.newBuilder().setBoolValue(s.status().healthy()).build())
                .putFields("takes_traffic", Value.newBuilder().setBoolValue(s.member().breaker().admits()).build())
                .putFields("outstanding", number(s.member().outstanding()))
                .putFields("age_ms", number(Duration.between(s.sampledAt(), now).toMillis()))
                .putFields("load", Value.newBuilder().setStructValue(figures).build())
                .build();
    }

    /** The sum of one figure over the endpoints that report it; empty when none does. */
    private static OptionalDouble sum(List<EndpointSample> samples, String figure) {
        double total = 0;
        boolean reported = false;
        for (EndpointSample s : samples) {
            Double v = s.status().load().get(figure);
            if (v != null) {
                total += v;
                reported = true;
            }
        }
        return reported ? OptionalDouble.of(total) : OptionalDouble.empty();
    }

    private static Value number(double d) {
        return Value.newBuilder().setNumberValue(d).build();
    }
}
