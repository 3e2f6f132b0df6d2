package io.handoff.connector.openai.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.connector.spi.EngineException;

/**
 * What a Server-Sent Events stream carries: reads the {@code data} payload of one event into the value a caller
 * wants, so that a stream of many small events is parsed once, straight into that value.
 *
 * @param <T> what each event becomes
 */
@FunctionalInterface
public interface SseEvents<T> {

    /**
     * Any JSON value, as a tree; an error event ({@code {"error":...}}, or an error object of its own,
     * {@code {"object":"error",...}}) fails the stream with what the engine said.
     */
    SseEvents<JsonNode> JSON = (payload, what) -> {
        JsonNode event = Json.parse(payload);
        if (event.has("error")) {
            throw HttpFailures.streamError(event.get("error"), what);
        }
        if ("error".equals(event.path("object").asText())) {
            throw HttpFailures.streamError(event, what);
        }
        return event;
    };

    /**
     * The value of one event's payload (UTF-8 JSON).
     *
     * @param what the exchange, for failure messages (names the endpoint, never its address)
     * @throws IllegalArgumentException when the payload is not what the stream carries
     * @throws EngineException when the event is the engine's report of an error
     */
    T read(byte[] payload, String what);
}
