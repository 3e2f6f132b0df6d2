package io.handoff.gateway.api.openengine;

import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionFailure;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.TransferDisposition;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.KvSessionState;
import io.handoff.openengine.v1.KvTransferDisposition;

import java.time.Instant;
import java.util.Optional;

/**
 * Translation between the session core's types and the openengine.v1 messages. Both north-side APIs (gRPC and
 * the REST mirror) answer through it, so they cannot disagree on what a session looks like.
 */
public final class KvSessionMessages {

    private KvSessionMessages() {
    }

    public static KvSession toProto(Session s) {
        KvSession.Builder b = KvSession.newBuilder()
                .setRef(KvSessionRef.newBuilder().setSessionId(s.id()))
                .setState(toProto(s.state()))
                .setScheduleStyle(toProto(s.style()))
                .setTransferDisposition(toProto(s.disposition()))
                .setLeaseExpiresAt(timestamp(s.leaseExpiresAt()))
                .setEpoch(s.epoch())
                .setRequestId(s.requestId())
                .setModel(s.model())
                .setCreatedAt(timestamp(s.createdAt()))
                .setUpdatedAt(timestamp(s.updatedAt()))
                .setLease(duration(s.lease()))
                .setRenewals(s.renewals())
                .setAttributes(s.attributes());
        if (s.isTerminal()) {
            b.setTerminalReason(s.terminalReason() == null ? "" : s.terminalReason());
            if (s.tombstoneExpiresAt() != null) {
                b.setTombstoneExpiresAt(timestamp(s.tombstoneExpiresAt()));
            }
        }
        return b.build();
    }

    public static KvSessionState toProto(SessionState state) {
        return KvSessionState.valueOf("KV_SESSION_STATE_" + state.name());
    }

    public static KvScheduleStyle toProto(ScheduleStyle style) {
        return style.wire();
    }

    public static KvTransferDisposition toProto(TransferDisposition disposition) {
        return KvTransferDisposition.valueOf("KV_TRANSFER_DISPOSITION_" + disposition.name());
    }

    /**
     * The closest OpenEngine error code for a refusal. Clients branch on it whatever the transport: gRPC sends it
     * in a trailer, REST in the error body's {@code code}.
     */
    public static ErrorCode toProto(SessionFailure failure) {
        return switch (failure) {
            case INVALID_ARGUMENT, LEASE_OUT_OF_RANGE, IDEMPOTENCY_CONFLICT -> ErrorCode.ERROR_CODE_INVALID_ARGUMENT;
            case NOT_FOUND, NOT_LIVE -> ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND;
            case UNSUPPORTED -> ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE;
            case ILLEGAL_TRANSITION, STALE_EPOCH -> ErrorCode.ERROR_CODE_INVALID_ARGUMENT;
            case QUOTA_EXCEEDED, RATE_LIMITED, STORE_UNAVAILABLE -> ErrorCode.ERROR_CODE_OVERLOADED;
            case DRAINING -> ErrorCode.ERROR_CODE_DRAINING;
        };
    }

    /** Empty for UNSPECIFIED; an unknown number (a newer client) is refused as invalid. */
    public static Optional<ScheduleStyle> fromProto(KvScheduleStyle style) {
        try {
            return ScheduleStyle.ofWire(style);
        } catch (IllegalArgumentException unknown) {
            throw SessionException.invalid("unknown schedule_style");
        }
    }

    public static Optional<TransferDisposition> fromProto(KvTransferDisposition disposition) {
        return switch (disposition) {
            case KV_TRANSFER_DISPOSITION_UNSPECIFIED -> Optional.empty();
            case KV_TRANSFER_DISPOSITION_REQUIRED -> Optional.of(TransferDisposition.REQUIRED);
            case KV_TRANSFER_DISPOSITION_BYPASS -> Optional.of(TransferDisposition.BYPASS);
            case UNRECOGNIZED -> throw SessionException.invalid(
                    "unknown transfer_disposition");
        };
    }

    public static Timestamp timestamp(Instant instant) {
        return Timestamp.newBuilder().setSeconds(instant.getEpochSecond()).setNanos(instant.getNano()).build();
    }

    // java.time.Duration and protobuf's Duration meet in these two converters: the protobuf one is imported
    public static Duration duration(java.time.Duration d) {
        return Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
    }

    /** The range of a valid protobuf Duration's seconds (about ten thousand years either way). */
    public static final long MAX_DURATION_SECONDS = 315_576_000_000L;

    /** A protobuf Duration as java.time, refusing values that are not valid protobuf durations. */
    public static java.time.Duration fromProto(Duration d) {
        if (d.getSeconds() > MAX_DURATION_SECONDS || d.getSeconds() < -MAX_DURATION_SECONDS
                || d.getNanos() <= -1_000_000_000 || d.getNanos() >= 1_000_000_000
                || (d.getSeconds() > 0 && d.getNanos() < 0) || (d.getSeconds() < 0 && d.getNanos() > 0)) {
            throw SessionException.invalid("lease is not a valid duration");
        }
        return java.time.Duration.ofSeconds(d.getSeconds(), d.getNanos());
    }
}
