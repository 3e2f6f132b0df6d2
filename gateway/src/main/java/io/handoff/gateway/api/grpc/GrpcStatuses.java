package io.handoff.gateway.api.grpc;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.api.openengine.KvSessionMessages;
import io.handoff.gateway.orchestration.GenerateRefusal;
import io.handoff.gateway.runtime.ClientText;
import io.handoff.gateway.session.SessionException;
import io.handoff.openengine.v1.ErrorCode;

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
        return status.withDescription(refusal.getMessage()).asRuntimeException(trailers);
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
            case QUOTA_EXCEEDED -> Status.RESOURCE_EXHAUSTED;
            case STORE_UNAVAILABLE, DRAINING -> Status.UNAVAILABLE;
        };
        Metadata trailers = new Metadata();
        trailers.put(ERROR_CODE, KvSessionMessages.toProto(refusal.failure()).name());
        return status.withDescription(ClientText.withoutAddresses(refusal.getMessage())).asRuntimeException(trailers);
    }
}
