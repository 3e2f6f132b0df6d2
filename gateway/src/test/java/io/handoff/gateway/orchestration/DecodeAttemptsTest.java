package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.vllm.VllmConnectorService;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteSettings;
import io.handoff.openengine.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which decode failures move the leg to another endpoint before attach: only one that never reached its engine. No
 * engine holds anything under the planned native ids then, so the next endpoint may be sent the same ones; a leg that
 * reached an engine is never retried, since that engine may hold KV or a request under those ids.
 */
class DecodeAttemptsTest {

    private static final int ATTEMPTS = 2;

    /**
     * A vLLM route as negotiated (its connector lets a decode go elsewhere), with two decode attempts. The rule reads
     * only the route's settings and capabilities; this route has no connector or pools, since nothing here runs.
     */
    private static DecodeAttempts attempts() {
        List<Endpoint> prefill = List.of(Endpoint.of("p-0", "http://127.0.0.1:1"));
        List<Endpoint> decode = List.of(Endpoint.of("d-0", "http://127.0.0.1:2"), Endpoint.of("d-1",
                "http://127.0.0.1:3"));
        RouteSettings settings = RouteSettings.builder("r", "m", "vllm").prefill(prefill).decode(decode)
                .decodeAttempts(ATTEMPTS).options(Map.of("hold-mode", "fixed")).build();
        ConnectorCapabilities caps = new VllmConnectorService().initialise(new ConnectorConfig(settings.name(),
                settings.engineModel(), prefill, decode, settings.options()));
        assertTrue(caps.decodeRetryElsewhere(), "vLLM's transfer parameters name the producer, not the consumer");
        Duration lease = Duration.ofSeconds(30);
        return new DecodeAttempts(new Route(settings, caps, null, null, null, lease, lease, new AtomicInteger(), null),
                null);
    }

    @Test
    void aDecodeThatNeverReachedItsEngineMayMoveToAnotherEndpoint() {
        assertTrue(attempts().retryable(EngineException.notSent(ErrorCode.ERROR_CODE_INTERNAL,
                "connection refused"), 1, false));
    }

    @Test
    void aDecodeThatReachedItsEngineIsNeverRetried() {
        DecodeAttempts attempts = attempts();
        assertFalse(attempts.retryable(EngineException.sentRetryable(ErrorCode.ERROR_CODE_OVERLOADED, "HTTP 503"), 1,
                false), "the engine had the request: it may hold KV under the planned ids");
        assertFalse(attempts.retryable(EngineException.sentRetryable(ErrorCode.ERROR_CODE_INTERNAL,
                "the decode stream was silent for 60000 ms"), 1, false));
        assertFalse(attempts.retryable(EngineException.sentFinal(ErrorCode.ERROR_CODE_INTERNAL, "reset mid-stream"), 1,
                false));
    }

    @Test
    void noMoveAfterTheLastAttemptOnceTheClientHasEventsOrWhenTheFailureSaysNothingOfWhereItHappened() {
        DecodeAttempts attempts = attempts();
        EngineException unreachable = EngineException.notSent(ErrorCode.ERROR_CODE_INTERNAL, "connection refused");
        assertFalse(attempts.retryable(unreachable, ATTEMPTS, false), "the route's decode-attempts are used up");
        assertFalse(attempts.retryable(unreachable, 1, true), "the client has received events from this decode");
        assertFalse(attempts.retryable(new IllegalStateException("anything else"), 1, false));
    }
}
