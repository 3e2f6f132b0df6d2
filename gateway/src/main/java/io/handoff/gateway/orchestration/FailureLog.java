package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.Endpoint;
import org.jboss.logging.Logger;

import java.util.Objects;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The operator's account of a failed request: what the client was told holds no internal address, so the log says
 * where the legs ran (each endpoint's name and address) and the whole chain of causes, whose transport errors name
 * the sockets. The request's trace has the same (the leg spans carry the endpoint's address and the exception).
 */
final class FailureLog {

    private static final Logger LOG = Logger.getLogger(FailureLog.class);

    private FailureLog() {
    }

    static void failed(String requestId, String route, Throwable failure, Endpoint... endpoints) {
        if (!LOG.isInfoEnabled()) {
            return;
        }
        String where = Stream.of(endpoints).filter(Objects::nonNull)
                .map(e -> e.name() + " (" + e.uri() + ")").distinct().collect(Collectors.joining(", "));
        LOG.infof("request %s on route %s failed on %s: %s", requestId, route, where, causes(failure));
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
