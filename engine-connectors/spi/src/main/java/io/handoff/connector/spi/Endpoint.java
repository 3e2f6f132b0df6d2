package io.handoff.connector.spi;

import java.net.URI;
import java.util.Objects;

/**
 * One engine endpoint of a pool, as configured on a route.
 *
 * @param name a stable name for logs, metrics and cleanup obligations (e.g. {@code prefill-0})
 * @param uri  where the engine listens (for HTTP engines the base URL, for gRPC engines {@code grpc://host:port})
 */
public record Endpoint(String name, URI uri) {

    public Endpoint {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(uri, "uri");
    }

    public static Endpoint of(String name, String uri) {
        return new Endpoint(name, URI.create(uri));
    }
}
