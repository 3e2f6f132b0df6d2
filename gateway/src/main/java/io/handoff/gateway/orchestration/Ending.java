package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.EngineException;
import io.handoff.gateway.session.SessionState;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateResponse;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;

/**
 * How an accepted request ends. Many things can end it (the decode finishes, a leg fails, the client goes away,
 * Control.Abort, the session ended elsewhere); the first one decides, once, by compare-and-set
 * ({@link HandoffRun}), and everything after follows from that one value: whether the legs are aborted natively,
 * what the session becomes, and what the client still receives.
 */
sealed interface Ending {

    /** Whether legs still running are stopped through the engines' native abort paths. */
    default boolean abortsLegs() {
        return true;
    }

    /** The state the session is moved to; empty when this run does not end it. */
    Optional<SessionState> sessionEnd();

    /** Why, as the session records it. */
    String reason();

    /** What the client still receives after the last relayed event. */
    default List<GenerateResponse> tail(EventRelay relay) {
        return List.of();
    }

    /** The decode finished every output; an EngineError the engine sent in its stream makes the session FAILED. */
    record Completed(boolean engineError) implements Ending {
        public boolean abortsLegs() {
            return false;
        }

        public Optional<SessionState> sessionEnd() {
            return Optional.of(engineError ? SessionState.FAILED : SessionState.COMPLETE);
        }

        public String reason() {
            return engineError ? "the engine reported an error" : "the decode finished";
        }
    }

    /** The request completed during its prefill: no decode leg follows, and the answer is the prefill's. */
    record FinishedInPrefill() implements Ending {
        public boolean abortsLegs() {
            return false;
        }

        public Optional<SessionState> sessionEnd() {
            return Optional.of(SessionState.RELEASED);
        }

        public String reason() {
            return "the request finished during its prefill";
        }
    }

    /** A participant's prefill parked its KV: the session stays READY for the framework's decode leg. */
    record ParkedForParticipant() implements Ending {
        public boolean abortsLegs() {
            return false;
        }

        public Optional<SessionState> sessionEnd() {
            return Optional.empty();
        }

        public String reason() {
            return "the participant's prefill parked its KV";
        }
    }

    /** A leg failed: the client gets one terminal EngineError, unless the stream had already ended. */
    record Failed(EngineException failure) implements Ending {
        public Optional<SessionState> sessionEnd() {
            return Optional.of(SessionState.FAILED);
        }

        public String reason() {
            return failure.getMessage();
        }

        public List<GenerateResponse> tail(EventRelay relay) {
            return relay.done() ? List.of()
                    : List.of(relay.terminalError(failure.code(), failure.getMessage(), relay.retryable(failure)));
        }

        /** Any failure of a leg as the SPI's failure: a timeout may be retried, anything else unknown is final. */
        static EngineException asEngineFailure(Throwable f) {
            if (f instanceof EngineException e) {
                return e;
            }
            if (f instanceof TimeoutException) {
                return EngineException.sentRetryable(ErrorCode.ERROR_CODE_INTERNAL, f.getMessage(), f);
            }
            return EngineException.sentFinal(ErrorCode.ERROR_CODE_INTERNAL,
                    "internal failure: " + f.getClass().getSimpleName() + ": " + f.getMessage(), f);
        }
    }

    /** The client cancelled its call: nobody is listening any more. */
    record CancelledByClient() implements Ending {
        public Optional<SessionState> sessionEnd() {
            return Optional.of(SessionState.CANCELLED);
        }

        public String reason() {
            return "cancelled by the client";
        }
    }

    /** Stopped from outside (Control.Abort): every unfinished output ends CANCELLED. */
    record Aborted(String reason) implements Ending {
        public Optional<SessionState> sessionEnd() {
            return Optional.of(SessionState.CANCELLED);
        }

        public List<GenerateResponse> tail(EventRelay relay) {
            return relay.cancelRemaining(reason);
        }
    }

    /**
     * The session ended under the request (aborted or expired on another replica, or a move the store refused): the
     * legs stop and the session is not touched. A refused move reaches the client as the move's failure; a loss
     * the lease keeper found ends the unfinished outputs CANCELLED.
     */
    record SessionLost(String reason, Optional<EngineException> failure) implements Ending {
        public Optional<SessionState> sessionEnd() {
            return Optional.empty();
        }

        public List<GenerateResponse> tail(EventRelay relay) {
            return failure.map(f -> new Failed(f).tail(relay)).orElseGet(() -> relay.cancelRemaining(reason));
        }
    }
}
