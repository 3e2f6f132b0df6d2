package io.handoff.gateway.session;

import io.handoff.connector.spi.ScheduleStyle;
import com.google.protobuf.Struct;

import java.time.Duration;
import java.time.Instant;

/** A validated allocation, ready for the store: every default already resolved, the id already minted. */
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
        String route) {

    public Instant leaseExpiresAt() {
        return now.plus(lease);
    }
}
