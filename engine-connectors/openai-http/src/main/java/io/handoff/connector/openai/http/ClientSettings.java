package io.handoff.connector.openai.http;

import java.time.Duration;

/**
 * How a connector's HTTP clients talk to its engines.
 *
 * @param connectTimeout  how long to wait for a TCP connection before the endpoint counts as unreachable
 * @param idleTimeout     longest silence on an exchange (no byte received) before it is abandoned; for a stream this
 *                        bounds the gap between tokens, for a non-streaming call the time to the answer
 * @param poolSize        most connections per endpoint for decode legs, probes and cleanup calls (each streaming leg
 *                        holds one for its whole life)
 * @param prefillPoolSize most connections per endpoint for prefill legs, which have a client of their own: a prefill
 *                        leg is short, so a pool sized for the open decode streams would, after a burst of starts,
 *                        keep as many idle prefill connections as there are streams
 */
public record ClientSettings(Duration connectTimeout, Duration idleTimeout, int poolSize, int prefillPoolSize) {

    /** Connections per endpoint when a route does not say. */
    public static final int DEFAULT_MAX_CONNECTIONS = 1024;

    /** The same limit for both kinds of leg. */
    public ClientSettings(Duration connectTimeout, Duration idleTimeout, int poolSize) {
        this(connectTimeout, idleTimeout, poolSize, poolSize);
    }

    public static ClientSettings defaults() {
        return new ClientSettings(Duration.ofSeconds(5), Duration.ofSeconds(300), DEFAULT_MAX_CONNECTIONS);
    }

    /** The settings of the prefill legs' own client: their limit is its pool. */
    public ClientSettings forPrefillLegs() {
        return new ClientSettings(connectTimeout, idleTimeout, prefillPoolSize, prefillPoolSize);
    }
}
