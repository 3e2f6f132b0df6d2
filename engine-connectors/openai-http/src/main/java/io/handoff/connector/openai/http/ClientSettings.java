package io.handoff.connector.openai.http;

import java.time.Duration;

/**
 * How a connector's HTTP client talks to its engines.
 *
 * @param connectTimeout how long to wait for a TCP connection before the endpoint counts as unreachable
 * @param idleTimeout    longest silence on an exchange (no byte received) before it is abandoned; for a stream this
 *                       bounds the gap between tokens, for a non-streaming call the time to the answer
 * @param poolSize       most connections per endpoint (each streaming leg holds one for its whole life)
 */
public record ClientSettings(Duration connectTimeout, Duration idleTimeout, int poolSize) {

    /** Connections per endpoint when a route does not say. */
    public static final int DEFAULT_MAX_CONNECTIONS = 1024;

    public static ClientSettings defaults() {
        return new ClientSettings(Duration.ofSeconds(5), Duration.ofSeconds(300), DEFAULT_MAX_CONNECTIONS);
    }
}
