package io.handoff.connector.openai.http;

import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HttpFailuresTest {

    @Test
    void statusesMapToCodesAndRetryability() {
        check(HttpFailures.fromStatus(400, "{\"error\":{\"message\":\"bad\"}}", "x"),
                ErrorCode.ERROR_CODE_INVALID_ARGUMENT, false);
        check(HttpFailures.fromStatus(422, "{\"detail\":\"bad\"}", "x"), ErrorCode.ERROR_CODE_INVALID_ARGUMENT, false);
        check(HttpFailures.fromStatus(404, "", "x"), ErrorCode.ERROR_CODE_MODEL_NOT_FOUND, false);
        check(HttpFailures.fromStatus(429, "", "x"), ErrorCode.ERROR_CODE_OVERLOADED, true);
        check(HttpFailures.fromStatus(503, "", "x"), ErrorCode.ERROR_CODE_OVERLOADED, true);
        check(HttpFailures.fromStatus(502, "", "x"), ErrorCode.ERROR_CODE_INTERNAL, true);
        check(HttpFailures.fromStatus(500, "", "x"), ErrorCode.ERROR_CODE_INTERNAL, false);
        assertTrue(HttpFailures.fromStatus(400, "{\"error\":{\"message\":\"bad thing\"}}", "x").getMessage()
                .contains("bad thing"));
    }

    @Test
    void transportFailuresSayWhetherAnythingWasSent() {
        EngineException refused = HttpFailures.fromTransport(new ConnectException("refused"), false, false, "x");
        assertTrue(refused.retryable());
        assertFalse(refused.sentToEngine());
        EngineException reset = HttpFailures.fromTransport(new RuntimeException("reset"), true, true, "x");
        assertFalse(reset.retryable());
        assertTrue(reset.sentToEngine());
        EngineException timeout = HttpFailures.fromTransport(new TimeoutException("slow"), true, false, "x");
        assertTrue(timeout.retryable());
        assertTrue(timeout.sentToEngine());
    }

    @Test
    void streamErrorEventsAreNeverRetryable() {
        EngineException e = HttpFailures.streamError(Json.parse("{\"message\":\"busy\",\"code\":503}"), "x");
        assertEquals(ErrorCode.ERROR_CODE_OVERLOADED, e.code());
        assertFalse(e.retryable());
        assertTrue(e.sentToEngine());
    }

    private static void check(EngineException e, ErrorCode code, boolean retryable) {
        assertEquals(code, e.code(), e.getMessage());
        assertEquals(retryable, e.retryable(), e.getMessage());
        assertTrue(e.sentToEngine());
    }
}
