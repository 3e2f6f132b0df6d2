package io.handoff.gateway.api.grpc;

import io.quarkus.grpc.api.ServerBuilderCustomizer;
import io.quarkus.grpc.runtime.config.GrpcServerConfiguration;
import io.vertx.grpc.VertxServerBuilder;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * What the gRPC listener needs that Quarkus has no key for.
 *
 * <ul>
 * <li>Limits taken from the HTTP listener's keys of the same meaning so that one value bounds both
 * (docs/reliability.md, "The edge"): the calls one connection may have open at once (HTTP/2 streams, advertised in
 * SETTINGS; a client queues the rest) and how long a connection without calls stays open. No cap on the streams a
 * client resets: a deadline or a cancel is a reset, and a proxy carrying many clients' calls on one connection resets
 * many.</li>
 * <li>Request messages that do not parse reach {@link RequestEdge} as unreadable ({@link UnreadableRequests})
 * rather than failing inside grpc-java, which would answer them UNKNOWN.</li>
 * </ul>
 */
@ApplicationScoped
public class GrpcListener implements ServerBuilderCustomizer<VertxServerBuilder> {

    private final int maxConcurrentStreams;
    private final Duration idleTimeout;

    public GrpcListener(
            @ConfigProperty(name = "quarkus.http.limits.max-concurrent-streams") int maxConcurrentStreams,
            @ConfigProperty(name = "quarkus.http.idle-timeout") Duration idleTimeout) {
        this.maxConcurrentStreams = maxConcurrentStreams;
        this.idleTimeout = idleTimeout;
    }

    @Override
    public void customize(GrpcServerConfiguration config, VertxServerBuilder builder) {
        builder.nettyBuilder()
                .maxConcurrentCallsPerConnection(maxConcurrentStreams)
                .maxConnectionIdle(idleTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .setBinaryLog(new UnreadableRequests());
    }
}
