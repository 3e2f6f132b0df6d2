package io.handoff.gateway.api.grpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.handoff.gateway.tenancy.ApiKeys;
import io.handoff.gateway.tenancy.Caller;
import io.quarkus.grpc.GlobalInterceptor;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Establishes the {@link Caller} of every gRPC call from {@code authorization: Bearer <key>} (or
 * {@code x-api-key}); an unknown, missing or repeated key ends the call with UNAUTHENTICATED before any service
 * runs.
 * Server reflection needs no key.
 */
@GlobalInterceptor
@ApplicationScoped
public class GrpcCallerInterceptor implements ServerInterceptor {

    public static final Context.Key<Caller> CALLER = Context.key("handoff-caller");

    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> API_KEY = Metadata.Key.of("x-api-key", Metadata.ASCII_STRING_MARSHALLER);

    private final ApiKeys keys;

    public GrpcCallerInterceptor(ApiKeys keys) {
        this.keys = keys;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        if (call.getMethodDescriptor().getServiceName() != null
                && call.getMethodDescriptor().getServiceName().startsWith("grpc.reflection.")) {
            return next.startCall(call, headers);
        }
        Optional<Caller> caller = keys.resolve(presentedKey(headers));
        if (caller.isEmpty()) {
            call.close(Status.UNAUTHENTICATED.withDescription(ApiKeys.KEY_REQUIRED), new Metadata());
            return new ServerCall.Listener<>() {
            };
        }
        return Contexts.interceptCall(Context.current().withValue(CALLER, caller.get()), call, headers, next);
    }

    private static String presentedKey(Metadata headers) {
        return ApiKeys.presentedKey(all(headers, AUTHORIZATION), all(headers, API_KEY));
    }

    private static List<String> all(Metadata headers, Metadata.Key<String> key) {
        Iterable<String> values = headers.getAll(key);
        List<String> out = new ArrayList<>(1);
        if (values != null) {
            values.forEach(out::add);
        }
        return out;
    }

    /** The caller of the current gRPC call; only valid on the thread that runs the service method. */
    public static Caller current() {
        Caller caller = CALLER.get();
        if (caller == null) {
            throw Status.UNAUTHENTICATED.withDescription("no caller established").asRuntimeException();
        }
        return caller;
    }
}
