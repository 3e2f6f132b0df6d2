package io.handoff.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;

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
        this.name = name;
        this.key = key;
        this.client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setMaxPoolSize(poolSize));
        this.gateway = gateway;
        this.model = model;
        this.maxTokens = maxTokens;
    }

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
