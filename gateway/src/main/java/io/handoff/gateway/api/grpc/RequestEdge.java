package io.handoff.gateway.api.grpc;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.quarkus.grpc.GlobalInterceptor;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * What every gRPC call gets at the edge, whatever its service. A request message that does not parse (broken bytes,
 * a string that is not UTF-8, nesting past protobuf's limit) never reaches the service: it arrives here as
 * {@code null} ({@link UnreadableRequests}), or not at all, and the call is refused INVALID_ARGUMENT, the caller's
 * fault. And a status description is at most {@value #MAX_DESCRIPTION} characters: a refusal that
 * quotes a field of the request (an unknown model of a megabyte) must not make trailers the client cannot read.
 */
@GlobalInterceptor
@ApplicationScoped
public class RequestEdge implements ServerInterceptor {

    static final int MAX_DESCRIPTION = 1024;
    static final String UNREADABLE = "the request message could not be read as the method's protobuf message "
            + "(malformed bytes, a string that is not UTF-8, or nesting deeper than 100)";

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        ServerCall<Q, R> bounded = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                String description = status.getDescription();
                super.close(description != null && description.length() > MAX_DESCRIPTION
                        ? status.withDescription(description.substring(0, MAX_DESCRIPTION) + "...") : status, trailers);
            }
        };
        ServerCall.Listener<Q> listener = next.startCall(bounded, headers);
        if (!call.getMethodDescriptor().getType().clientSendsOneMessage()) {
            return listener;
        }
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            private boolean received;

            @Override
            public void onMessage(Q message) {
                if (message == null) {
                    return;
                }
                received = true;
                super.onMessage(message);
            }

            @Override
            public void onHalfClose() {
                if (!received) {
                    bounded.close(Status.INVALID_ARGUMENT.withDescription(UNREADABLE), new Metadata());
                    return;
                }
                super.onHalfClose();
            }
        };
    }
}
