package io.handoff.gateway.session;

import com.google.protobuf.Struct;
import io.handoff.connector.spi.ScheduleStyle;

import java.time.Duration;
import java.util.Optional;

/**
 * An allocation as a caller asked for it, before validation and defaults. Absent optionals mean "unspecified":
 * the deployment's default style, REQUIRED transfer, the advertised default lease.
 */
public record AllocateCommand(
        String requestId,
        String model,
        String idempotencyKey,
        Optional<ScheduleStyle> style,
        Optional<TransferDisposition> disposition,
        Optional<Duration> lease,
        Struct attributes,
        String route) {
}
