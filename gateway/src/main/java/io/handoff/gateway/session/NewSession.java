package io.handoff.gateway.session;

import com.google.protobuf.Struct;
import io.handoff.connector.spi.ScheduleStyle;

import java.time.Duration;
import java.time.Instant;

/**
 * A validated allocation, ready for the store: every default already resolved, the id already minted.
 *
 * @param replaceEnded how to treat a session that already holds the idempotency key: false answers it, live or
 *                     ended, if the fingerprint matches (a client's retry); true answers it only while it is live,
 *                     whatever its fingerprint, and otherwise replaces it with this one (a fresh attempt of a
 *                     Generate whose earlier attempt ended)
 * @param traceParent  the W3C traceparent of the request allocating it, or "" (see {@link Session#traceParent()})
 */
public record NewSession(
        String id,
        String tenant,
        String requestId,
        String model,
        String idempotencyKey,
        String fingerprint,
        ScheduleStyle style,
        TransferDisposition disposition,
        Duration lease,
        Instant now,
        Struct attributes,
        String route,
        String traceParent,
        boolean replaceEnded) {

    public Instant leaseExpiresAt() {
        return now.plus(lease);
    }
}
