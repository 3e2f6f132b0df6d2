package io.handoff.gateway.api.grpc;

import com.google.protobuf.Any;
import com.google.rpc.RetryInfo;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.ProtoUtils;
import io.handoff.gateway.api.openengine.KvSessionMessages;
import io.handoff.gateway.orchestration.GenerateRefusal;
import io.handoff.gateway.runtime.ClientText;
import io.handoff.gateway.session.SessionException;
import io.handoff.openengine.v1.ErrorCode;

import java.time.Duration;

/**
 * The one mapping from a refused session operation to a gRPC status. Each refusal also carries the closest
 * OpenEngine {@link ErrorCode} in the trailer {@value #ERROR_CODE_TRAILER}, so clients can branch without parsing
 * messages; that code comes from {@link KvSessionMessages}, which the REST mirror uses too. The table is repeated
 * in docs/api.md.
 */
public final class GrpcStatuses {

    public static final String ERROR_CODE_TRAILER = "handoff-error-code";
    public static final String RETRYABLE_TRAILER = "handoff-retryable";
    static final Metadata.Key<String> ERROR_CODE = Metadata.Key.of(ERROR_CODE_TRAILER, Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> RETRYABLE = Metadata.Key.of(RETRYABLE_TRAILER, Metadata.ASCII_STRING_MARSHALLER);

    public static final String RETRY_AFTER_MS_TRAILER = "retry-after-ms";
    static final Metadata.Key<String> RETRY_AFTER_MS = Metadata.Key.of(RETRY_AFTER_MS_TRAILER,
            Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<com.google.rpc.Status> STATUS_DETAILS = Metadata.Key.of("grpc-status-details-bin",
            ProtoUtils.metadataMarshaller(com.google.rpc.Status.getDefaultInstance()));

    private GrpcStatuses() {
    }

    /**
     * A Generate refused before acceptance: the status closest to its OpenEngine error code, the code itself in
     * the trailer, and whether an unchanged retry can succeed in {@value #RETRYABLE_TRAILER}.
     */
    public static StatusRuntimeException refused(GenerateRefusal refusal) {
        Status status = refusal.unavailable() ? Status.UNAVAILABLE : switch (refusal.code()) {
            case ERROR_CODE_INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
            case ERROR_CODE_UNSUPPORTED_FEATURE, ERROR_CODE_ROLE_MISMATCH -> Status.FAILED_PRECONDITION;
            case ERROR_CODE_MODEL_NOT_FOUND, ERROR_CODE_REQUEST_NOT_FOUND, ERROR_CODE_KV_SESSION_NOT_FOUND ->
                    Status.NOT_FOUND;
            case ERROR_CODE_OVERLOADED -> Status.RESOURCE_EXHAUSTED;
            case ERROR_CODE_DUPLICATE_REQUEST -> Status.ALREADY_EXISTS;
            case ERROR_CODE_DRAINING -> Status.UNAVAILABLE;
            case ERROR_CODE_CANCELLED -> Status.CANCELLED;
            case ERROR_CODE_KV_TRANSFER_FAILED -> Status.ABORTED;
            default -> Status.INTERNAL;
        };
        Metadata trailers = new Metadata();
        trailers.put(ERROR_CODE, refusal.code().name());
        trailers.put(RETRYABLE, Boolean.toString(refusal.retryable()));
        refusal.retryAfter().ifPresent(wait -> retryAfter(trailers, wait));
        return status.withDescription(refusal.getMessage()).asRuntimeException(trailers);
    }

    /**
     * The wait a rate limit asks for, twice: {@code retry-after-ms} for any client, and a {@code google.rpc.RetryInfo}
     * in {@code grpc-status-details-bin} for clients whose libraries read the standard details (its status code and
     * message repeat the call's own, as the details' rules ask).
     */
    private static void retryAfter(Metadata trailers, Duration wait) {
        trailers.put(RETRY_AFTER_MS, Long.toString(Math.max(1, (wait.toNanos() + 999_999) / 1_000_000)));
        trailers.put(STATUS_DETAILS, com.google.rpc.Status.newBuilder()
                .setCode(Status.Code.RESOURCE_EXHAUSTED.value())
                .addDetails(Any.pack(RetryInfo.newBuilder().setRetryDelay(com.google.protobuf.Duration.newBuilder()
                        .setSeconds(wait.getSeconds()).setNanos(wait.getNano())).build()))
                .build());
    }

    /** A refused session operation, with a message a client may read (no internal address). */
    public static StatusRuntimeException toStatus(Throwable failure) {
        if (failure instanceof StatusRuntimeException status) {
            return status;
        }
        if (!(failure instanceof SessionException refusal)) {
            return Status.INTERNAL.withDescription("internal error").withCause(failure).asRuntimeException();
        }
        Status status = switch (refusal.failure()) {
            case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
            case LEASE_OUT_OF_RANGE -> Status.OUT_OF_RANGE;
            case NOT_FOUND -> Status.NOT_FOUND;
            case IDEMPOTENCY_CONFLICT -> Status.ALREADY_EXISTS;
            case UNSUPPORTED, NOT_LIVE, ILLEGAL_TRANSITION -> Status.FAILED_PRECONDITION;
            case STALE_EPOCH -> Status.ABORTED;
            case QUOTA_EXCEEDED, RATE_LIMITED -> Status.RESOURCE_EXHAUSTED;
            case STORE_UNAVAILABLE, DRAINING -> Status.UNAVAILABLE;
        };
        Metadata trailers = new Metadata();
        trailers.put(ERROR_CODE, KvSessionMessages.toProto(refusal.failure()).name());
        refusal.retryAfter().ifPresent(wait -> retryAfter(trailers, wait));
        return status.withDescription(ClientText.withoutAddresses(refusal.getMessage())).asRuntimeException(trailers);
    }
}
