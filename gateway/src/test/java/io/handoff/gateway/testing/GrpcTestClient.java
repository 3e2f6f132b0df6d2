package io.handoff.gateway.testing;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.MetadataUtils;
import org.eclipse.microprofile.config.ConfigProvider;

import java.util.concurrent.TimeUnit;

/** A real gRPC client over loopback, presenting an API key the way a framework would. */
public final class GrpcTestClient implements AutoCloseable {

    private final ManagedChannel channel;

    public GrpcTestClient(int port) {
        this.channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    }

    /** A client of the gateway under test, on its gRPC listener. */
    public static GrpcTestClient ofGateway() {
        return new GrpcTestClient(ConfigProvider.getConfig().getValue("quarkus.grpc.server.test-port", Integer.class));
    }

    public ManagedChannel channel() {
        return channel;
    }

    public static <S extends AbstractStub<S>> S withKey(S stub, String apiKey) {
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + apiKey);
        return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
