package io.handoff.connector.spi;

import io.handoff.openengine.v1.ErrorCode;

import java.util.List;

/**
 * A leg failed, or was refused before anything was sent. The code and the retryable flag are those of the
 * OpenEngine {@code EngineError} the gateway reports: {@code retryable} is true only when the unchanged request can
 * succeed on retry.
 *
 * <p>Make one with the factory that names its case; the two flags then follow from the case:
 * <table>
 * <caption>The cases and their flags</caption>
 * <tr><th>factory</th><th>{@link #sentToEngine()}</th><th>{@link #retryable()}</th><th>when</th></tr>
 * <tr><td>{@link #refused}, {@link #unsupported}, {@link #invalid}</td><td>false</td><td>false</td>
 * <td>the connector declines before sending: the same request would be declined again</td></tr>
 * <tr><td>{@link #notSent}</td><td>false</td><td>true</td>
 * <td>the engine was not reached (no connection): nothing there needs cleaning up, and the unchanged request may
 * be sent again</td></tr>
 * <tr><td>{@link #sentRetryable}</td><td>true</td><td>true</td>
 * <td>the engine got the request and failed it in a way a resend can overcome (busy, a proxy in between failed,
 * nothing was answered yet)</td></tr>
 * <tr><td>{@link #sentFinal}</td><td>true</td><td>false</td>
 * <td>the engine got the request and failed it for good, or may have acted on it (answered, consumed KV): the
 * same request must not be sent again</td></tr>
 * </table>
 * Where a flag is only known at run time, choose between two factories at the call site
 * ({@code answered ? sentFinal(...) : sentRetryable(...)}), so that the case stays readable there.
 */
public class EngineException extends RuntimeException {

    private final ErrorCode code;
    private final boolean retryable;
    private final boolean sentToEngine;
    private final List<HeldKv> held;

    /** Through the named factories only, so that every failure says plainly whether it was sent and may be retried. */
    private EngineException(ErrorCode code, boolean retryable, boolean sentToEngine, String message, Throwable cause,
            List<HeldKv> held) {
        super(message, cause);
        this.code = code;
        this.retryable = retryable;
        this.sentToEngine = sentToEngine;
        this.held = List.copyOf(held);
    }

    /** The same failure, also reporting KV an engine still holds despite it (e.g. P parked, then the leg broke). */
    public EngineException withHeld(List<HeldKv> stillHeld) {
        return new EngineException(code, retryable, sentToEngine, getMessage(), getCause(), stillHeld);
    }

    /**
     * The connector declines to send: nothing reached an engine, and the same request would be declined again, so
     * it is not retryable (a field it cannot carry, a hold that may have ended).
     */
    public static EngineException refused(ErrorCode code, String message) {
        return refused(code, message, null);
    }

    /** As {@link #refused(ErrorCode, String)}, keeping what made the connector decline as the cause. */
    public static EngineException refused(ErrorCode code, String message, Throwable cause) {
        return new EngineException(code, false, false, message, cause, List.of());
    }

    /** Refused before anything reached an engine: a field or style the connector cannot carry losslessly. */
    public static EngineException unsupported(String message) {
        return refused(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, message);
    }

    /** Refused before anything reached an engine: the request (or what the gateway stored for it) is malformed. */
    public static EngineException invalid(String message) {
        return refused(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, message);
    }

    /** As {@link #invalid(String)}, keeping the parse failure as the cause. */
    public static EngineException invalid(String message, Throwable cause) {
        return refused(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, message, cause);
    }

    /**
     * The engine was not reached (no connection was made): nothing there needs cleaning up, and the unchanged
     * request may succeed when sent again, here or on another endpoint, so it is always retryable. A connector that
     * declines to send is {@link #refused} instead.
     */
    public static EngineException notSent(ErrorCode code, String message) {
        return notSent(code, message, null);
    }

    /** As {@link #notSent(ErrorCode, String)}, keeping the transport failure as the cause. */
    public static EngineException notSent(ErrorCode code, String message, Throwable cause) {
        return new EngineException(code, true, false, message, cause, List.of());
    }

    /**
     * The request reached the engine, which failed it in a way that the unchanged request can overcome when sent
     * again (the engine was busy, a proxy in between failed, the leg failed before anything was answered). The
     * engine may hold something for it: report that with {@link #withHeld(List)}.
     */
    public static EngineException sentRetryable(ErrorCode code, String message) {
        return sentRetryable(code, message, null);
    }

    /** As {@link #sentRetryable(ErrorCode, String)}, keeping what went wrong as the cause. */
    public static EngineException sentRetryable(ErrorCode code, String message, Throwable cause) {
        return new EngineException(code, true, true, message, cause, List.of());
    }

    /**
     * The request reached the engine, which failed it for good or may have acted on it (answered, streamed tokens,
     * consumed the parked KV): the same request must not be sent again. The engine may hold something for it:
     * report that with {@link #withHeld(List)}.
     */
    public static EngineException sentFinal(ErrorCode code, String message) {
        return sentFinal(code, message, null);
    }

    /** As {@link #sentFinal(ErrorCode, String)}, keeping what went wrong as the cause. */
    public static EngineException sentFinal(ErrorCode code, String message, Throwable cause) {
        return new EngineException(code, false, true, message, cause, List.of());
    }

    public ErrorCode code() {
        return code;
    }

    public boolean retryable() {
        return retryable;
    }

    /** What engines still hold after this failure; the gateway records each as a cleanup obligation. */
    public List<HeldKv> held() {
        return held;
    }

    /** Whether any byte of the leg reached the engine; false means nothing there needs cleaning up. */
    public boolean sentToEngine() {
        return sentToEngine;
    }
}
