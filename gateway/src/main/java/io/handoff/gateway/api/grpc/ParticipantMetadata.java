package io.handoff.gateway.api.grpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.handoff.connector.spi.Leg;
import io.quarkus.grpc.GlobalInterceptor;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Iterator;
import java.util.Locale;
import java.util.Optional;

/**
 * Reads the metadata with which a framework that drives the legs itself names them on Generate:
 * {@value #LEG} ({@code prefill} or {@code decode}) and, on a prefill leg, {@value #SESSION} (the session it
 * allocated). The {@code openengine-} prefix is reserved upstream, so these are ours. A malformed or repeated key
 * ends the call with INVALID_ARGUMENT before any service runs.
 */
@GlobalInterceptor
@ApplicationScoped
public class ParticipantMetadata implements ServerInterceptor {

    public static final String LEG = "handoff-leg";
    public static final String SESSION = "handoff-kv-session";

    static final Context.Key<ParticipantLeg> CURRENT = Context.key("handoff-participant-leg");

    private static final Metadata.Key<String> LEG_KEY = Metadata.Key.of(LEG, Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> SESSION_KEY = Metadata.Key.of(SESSION, Metadata.ASCII_STRING_MARSHALLER);

    /** @param sessionId the session a prefill leg runs on; empty on a decode leg */
    public record ParticipantLeg(Leg leg, String sessionId) {
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        Optional<String> leg;
        Optional<String> session;
        try {
            leg = single(headers, LEG_KEY);
            session = single(headers, SESSION_KEY);
        } catch (IllegalArgumentException e) {
            return refuse(call, e.getMessage());
        }
        if (leg.isEmpty()) {
            return session.isPresent() ? refuse(call, SESSION + " is set without " + LEG)
                    : next.startCall(call, headers);
        }
        ParticipantLeg parsed;
        switch (leg.get().toLowerCase(Locale.ROOT)) {
            case "prefill" -> {
                if (session.isEmpty() || session.get().isBlank()) {
                    return refuse(call, "a prefill leg names its session in " + SESSION);
                }
                parsed = new ParticipantLeg(Leg.PREFILL, session.get());
            }
            case "decode" -> {
                if (session.isPresent()) {
                    return refuse(call, "a decode leg names its session in kv.session (the ref of PrefillReady), "
                            + "not in " + SESSION);
                }
                parsed = new ParticipantLeg(Leg.DECODE, "");
            }
            default -> {
                return refuse(call, LEG + " must be prefill or decode, not '" + leg.get() + "'");
            }
        }
        return Contexts.interceptCall(Context.current().withValue(CURRENT, parsed), call, headers, next);
    }

    /** The leg named on the current call, if the caller is a participant. */
    static Optional<ParticipantLeg> current() {
        return Optional.ofNullable(CURRENT.get());
    }

    private static Optional<String> single(Metadata headers, Metadata.Key<String> key) {
        Iterable<String> values = headers.getAll(key);
        if (values == null) {
            return Optional.empty();
        }
        Iterator<String> it = values.iterator();
        String first = it.next();
        if (it.hasNext()) {
            throw new IllegalArgumentException(key.name() + " is repeated");
        }
        return Optional.of(first.trim());
    }

    private static <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, String why) {
        call.close(Status.INVALID_ARGUMENT.withDescription(why), new Metadata());
        return new ServerCall.Listener<>() {
        };
    }
}
