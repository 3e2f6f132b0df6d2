package io.handoff.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpVersion;

import java.io.IOException;
import java.net.URI;

/**
 * A streamed OpenAI completion through the gateway's HTTP front ({@code POST /v1/completions}, {@code stream: true}),
 * which runs it as the same orchestrated handoff as a Generate. The body is what a plain OpenAI client sends.
 */
final class GatewayHttp implements Target {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient client;
    private final URI gateway;
    private final String model;
    private final int maxTokens;
    private final String name;
    private final String key;

    GatewayHttp(Vertx vertx, URI gateway, String model, int maxTokens, int poolSize) {
        this(vertx, gateway, model, maxTokens, poolSize, "gateway HTTP /v1/completions", "http");
    }

    /** A completion on the route of {@code model}, reported under its own name (one route per policy, issue 15). */
    GatewayHttp(Vertx vertx, URI gateway, String model, int maxTokens, int poolSize, String name, String key) {
        this(vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setMaxPoolSize(poolSize)), gateway,
                model, maxTokens, name, key);
    }

    private GatewayHttp(HttpClient client, URI gateway, String model, int maxTokens, String name, String key) {
        this.name = name;
        this.key = key;
        this.client = client;
        this.gateway = gateway;
        this.model = model;
        this.maxTokens = maxTokens;
    }

    /**
     * The same completions over HTTP/2 (cleartext, prior knowledge), {@value #STREAMS_PER_CONNECTION} streams a
     * connection at most: below the 100 the gateway's listener allows (quarkus.http.limits.max-concurrent-streams).
     */
    static GatewayHttp overHttp2(Vertx vertx, URI gateway, String model, int maxTokens, int connections) {
        HttpClient client = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
                .setHttp2ClearTextUpgrade(false).setKeepAlive(true).setHttp2MaxPoolSize(connections)
                .setHttp2MultiplexingLimit(STREAMS_PER_CONNECTION));
        return new GatewayHttp(client, gateway, model, maxTokens, "gateway HTTP/2 /v1/completions", "http");
    }

    private static final int STREAMS_PER_CONNECTION = 80;

    @Override
    public String key() {
        return key;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void send(String requestId, String prompt, Listener listener) {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", model);
        body.put("prompt", prompt);
        body.put("max_tokens", maxTokens);
        body.put("stream", true);
        String text;
        try {
            text = JSON.writeValueAsString(body);
        } catch (IOException e) {
            listener.failed("completion", e);
            return;
        }
        StreamedCompletion.send(client, StreamedCompletion.post(gateway, requestId), text, maxTokens, "completion",
                listener);
    }

    @Override
    public void close() {
        client.close();
    }
}
