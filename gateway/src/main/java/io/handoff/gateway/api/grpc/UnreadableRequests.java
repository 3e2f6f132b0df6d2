package io.handoff.gateway.api.grpc;

import io.grpc.BinaryLog;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerMethodDefinition;

import java.io.InputStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Lets a request message that does not parse reach the interceptors as {@code null}, for {@link RequestEdge} to refuse
 * INVALID_ARGUMENT: grpc-java parses before any interceptor runs and answers a parse failure UNKNOWN ("Application
 * error processing RPC"), which blames the server for the caller's bytes. The binary-log hook is grpc-java's one
 * place where a server may swap a method's definition, so it is used here without logging anything. Only methods
 * whose client sends one message are changed; their definitions are made once per method.
 */
final class UnreadableRequests extends BinaryLog {

    private final Map<String, ServerMethodDefinition<?, ?>> lenient = new ConcurrentHashMap<>();

    @Override
    public <Q, R> ServerMethodDefinition<?, ?> wrapMethodDefinition(ServerMethodDefinition<Q, R> definition) {
        MethodDescriptor<Q, R> method = definition.getMethodDescriptor();
        if (!method.getType().clientSendsOneMessage()) {
            return definition;
        }
        return lenient.computeIfAbsent(method.getFullMethodName(), name -> ServerMethodDefinition.create(
                method.toBuilder(new NullWhenUnreadable<>(method.getRequestMarshaller()), method.getResponseMarshaller())
                        .build(), definition.getServerCallHandler()));
    }

    @Override
    public Channel wrapChannel(Channel channel) {
        return channel;
    }

    @Override
    public void close() {
    }

    private record NullWhenUnreadable<Q>(MethodDescriptor.Marshaller<Q> strict) implements MethodDescriptor.Marshaller<Q> {

        @Override
        public InputStream stream(Q value) {
            return strict.stream(value);
        }

        @Override
        public Q parse(InputStream stream) {
            try {
                return strict.parse(stream);
            } catch (RuntimeException unreadable) {
                return null;
            }
        }
    }
}
