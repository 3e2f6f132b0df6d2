package io.handoff.gateway.session;

import com.google.protobuf.Struct;
import io.handoff.connector.spi.ScheduleStyle;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One KV session as the store holds it: an immutable snapshot. Every field a replica needs to act on the session
 * (including cleanup after another replica died) is here, nothing lives only in a replica's memory.
 *
 * @param epoch       the fencing token: starts at 1 on allocation and grows by one at every state transition
 * @param traceParent the W3C traceparent of the request that allocated the session, or "" when it was not traced:
 *                    whoever cleans up after the session (maybe another replica, much later) links its span to it
 */
public record Session(
        String id,
        String tenant,
        String requestId,
        String model,
        String idempotencyKey,
        String fingerprint,
        ScheduleStyle style,
        TransferDisposition disposition,
        SessionState state,
        long epoch,
        Instant createdAt,
        Instant updatedAt,
        Duration lease,
        Instant leaseExpiresAt,
        int renewals,
        String terminalReason,
        Instant terminalAt,
        Instant tombstoneExpiresAt,
        Struct attributes,
        String route,
        String traceParent,
        Map<String, String> nativeIds,
        List<CleanupObligation> obligations) {

    public Session {
        attributes = attributes == null ? Struct.getDefaultInstance() : attributes;
        route = route == null ? "" : route;
        traceParent = traceParent == null ? "" : traceParent;
        nativeIds = nativeIds == null ? Map.of() : Map.copyOf(nativeIds);
        obligations = obligations == null ? List.of() : List.copyOf(obligations);
    }

    public boolean isTerminal() {
        return state.isTerminal();
    }

    /** Whether the session is still live at {@code now}: not terminal, and its lease has not run out. */
    public boolean isLiveAt(Instant now) {
        return state.isLive() && leaseExpiresAt.isAfter(now);
    }

    public List<CleanupObligation> pendingObligations() {
        return obligations.stream().filter(CleanupObligation::isPending).toList();
    }

    /** Whether some engine may still physically hold KV for this session, whatever its logical state. */
    public boolean engineMayHoldKv(Instant now) {
        return obligations.stream().anyMatch(o -> o.mayStillHold(now));
    }
}
