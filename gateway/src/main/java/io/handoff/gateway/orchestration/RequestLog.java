package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.Endpoint;
import org.jboss.logging.Logger;

import java.util.Objects;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What the log says about requests. One line per ended request under {@value #NAME}, off by default (WARN in
 * application.properties) and on with the demo fleet. And the operator's account of a failed request, always: what
 * the client was told holds no internal address, so this line says where the legs ran (each endpoint's name and
 * address) and the whole chain of causes, whose transport errors name the sockets. The request's trace has the same
 * (the leg spans carry the endpoint's address and the exception), and both lines name it by its trace id, which is
 * what an operator looks the request up by in the tracing backend.
 */
public final class RequestLog {

    /** The category of the one line per ended request. */
    public static final String NAME = "handoff.requests";

    private static final Logger ENDED = Logger.getLogger(NAME);
    private static final Logger FAILED = Logger.getLogger(RequestLog.class);

    private RequestLog() {
    }

    static void ended(String requestId, String route, String how, String family, Endpoint prefill, Endpoint decode,
            String sessionId, Object state, long epoch, String traceId) {
        ENDED.infof("request %s on route %s (%s, %s): prefill %s, decode %s; session %s %s at epoch %d; trace %s",
                requestId, route, how, family, prefill.name(), decode.name(), sessionId, state, epoch, traceId);
    }

    static void failed(String requestId, String route, String traceId, Throwable failure, Endpoint... endpoints) {
        if (!FAILED.isInfoEnabled()) {
            return;
        }
        String where = Stream.of(endpoints).filter(Objects::nonNull)
                .map(e -> e.name() + " (" + e.uri() + ")").distinct().collect(Collectors.joining(", "));
        FAILED.infof("request %s on route %s (trace %s) failed on %s: %s", requestId, route, traceId, where,
                causes(failure));
    }

    /** Every message of the failure and its causes, outermost first. */
    static String causes(Throwable failure) {
        StringBuilder out = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (out.length() > 0) {
                out.append(" <- ");
            }
            out.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage());
        }
        return out.toString();
    }
}
