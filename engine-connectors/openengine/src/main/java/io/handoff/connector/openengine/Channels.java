package io.handoff.connector.openengine;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.handoff.connector.spi.Endpoint;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One plaintext gRPC channel per engine endpoint, opened on first use (creating a channel does no I/O) and shared by
 * every call to that endpoint; all are closed with the connector.
 */
final class Channels implements AutoCloseable {
    private final Map<URI, ManagedChannel> channels = new ConcurrentHashMap<>();
    private volatile boolean closed;

    ManagedChannel to(Endpoint endpoint) {
        if (closed) {
            throw new IllegalStateException("the openengine connector is closed");
        }
        return channels.computeIfAbsent(endpoint.uri(), uri -> NettyChannelBuilder
            .forAddress(uri.getHost(), uri.getPort()).usePlaintext().build());
    }

    @Override
    public void close() {
        closed = true;
        channels.values().forEach(ManagedChannel::shutdownNow);
        channels.clear();
    }
}
