package io.handoff.gateway.session.store;

import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionFailure;
import org.jboss.logging.Logger;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Tells the log when the session store stops answering, with the reason the driver gave (clients only learn that it
 * is unavailable: the reason names Redis's address), and when it answers again: once per change, however many
 * requests fail in between, so an outage is one warning and not one per request.
 */
final class StoreReachability {

    private static final Logger LOG = Logger.getLogger(RedisSessionStore.class);

    private final String store;
    private final AtomicBoolean reachable = new AtomicBoolean(true);

    StoreReachability(String store) {
        this.store = store;
    }

    /** One operation ended: with an answer (a refusal is an answer too) or with {@code failure}. */
    void observed(Throwable failure) {
        if (failure instanceof SessionException e && e.failure() == SessionFailure.STORE_UNAVAILABLE) {
            if (reachable.compareAndSet(true, false)) {
                LOG.warn(store + " is unreachable: " + reason(e) + "; what needs it is refused until it answers");
            }
        } else if (!reachable.get() && reachable.compareAndSet(false, true)) {
            LOG.info(store + " answers again");
        }
    }

    private static String reason(SessionException e) {
        Throwable cause = e.getCause();
        return cause == null ? e.getMessage() : cause.getClass().getSimpleName() + ": " + cause.getMessage();
    }
}
