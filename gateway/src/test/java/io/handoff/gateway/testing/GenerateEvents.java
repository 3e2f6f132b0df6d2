package io.handoff.gateway.testing;

import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateResponse;

import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The upstream event rules a relayed Generate stream must keep, and what the client reads from it. */
public final class GenerateEvents {

    private GenerateEvents() {
    }

    /** The generated text of output 0. */
    public static String text(List<GenerateResponse> events) {
        return events.stream().filter(e -> e.hasToken() && e.getToken().getOutputIndex() == 0)
                .map(e -> e.getToken().getText()).collect(Collectors.joining());
    }

    public static List<GenerateResponse> errors(List<GenerateResponse> events) {
        return events.stream().filter(GenerateResponse::hasError).toList();
    }

    /**
     * A stream that ended normally for one output: every event carries the request id, every TokenOutput its
     * output_index, exactly one GenerationFinished (the last event, with {@code reason}), Usage only on it, no error.
     */
    public static void assertFinishedOnce(List<GenerateResponse> events, String requestId, FinishReason reason) {
        assertFalse(events.isEmpty(), "no events");
        for (GenerateResponse e : events) {
            assertEquals(requestId, e.getRequestId(), "request id of " + e);
            assertFalse(e.hasError(), "error event " + e);
            if (e.hasToken()) {
                assertTrue(e.getToken().hasOutputIndex(), "TokenOutput without output_index: " + e);
                assertEquals(0, e.getToken().getOutputIndex());
            }
        }
        List<GenerateResponse> finished = events.stream().filter(GenerateResponse::hasFinished).toList();
        assertEquals(1, finished.size(), "GenerationFinished events: " + finished);
        GenerateResponse last = events.get(events.size() - 1);
        assertTrue(last.hasFinished(), "the last event is the GenerationFinished: " + last);
        assertTrue(last.getFinished().hasOutputIndex(), "GenerationFinished without output_index: " + last);
        assertEquals(reason, last.getFinished().getReason(), last.toString());
        assertTrue(last.hasUsage(), "Usage rides the last event: " + last);
        assertEquals(1, events.stream().filter(GenerateResponse::hasUsage).count(), "Usage only on the last event");
    }

    /** A failed stream: one terminal EngineError, as its last event, nothing after it and no GenerationFinished. */
    public static GenerateResponse assertOneTerminalError(List<GenerateResponse> events, String requestId) {
        List<GenerateResponse> errors = errors(events);
        assertEquals(1, errors.size(), "EngineError events: " + events);
        GenerateResponse last = events.get(events.size() - 1);
        assertTrue(last.hasError(), "the EngineError ends the stream: " + events);
        assertEquals(requestId, last.getRequestId());
        assertTrue(events.stream().noneMatch(GenerateResponse::hasFinished), "finished and failed: " + events);
        events.stream().filter(GenerateResponse::hasToken)
                .forEach(e -> assertTrue(e.getToken().hasOutputIndex(), "TokenOutput without output_index: " + e));
        return last;
    }
}
