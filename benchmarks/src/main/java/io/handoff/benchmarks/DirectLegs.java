package io.handoff.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;

import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Locale;

/**
 * The baseline: the two legs of a vLLM (NixlConnector) handoff sent straight to the engines, as a minimal proxy does
 * (vLLM's toy proxy): the prefill with {@code max_tokens: 1}, not streamed, asking {@code do_remote_decode}; then the
 * decode, streamed, carrying the {@code kv_transfer_params} the prefill answered. Both legs carry the same
 * {@code X-Request-Id}.
 *
 * <p>The bodies are byte for byte what the gateway's vLLM connector sends for the same request (see
 * {@code VllmBodies} and {@code mappings/vllm.md}), including {@code return_token_ids} and
 * {@code stream_options.include_usage}, and a loopback {@code remote_host} is replaced by the prefill's host as the
 * connector does, so the engines do the same work in both runs and only the gateway's own cost differs.
 */
final class DirectLegs implements Target {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** vLLM's convention (toy proxy, llm-d): only do_remote_decode is read by the producer. */
    private static final String PREFILL_PARAMS = "{\"do_remote_decode\":true,\"do_remote_prefill\":false,"
            + "\"remote_engine_id\":null,\"remote_block_ids\":null,\"remote_host\":null,\"remote_port\":null}";
    /** Without any of these a vLLM decode silently prefills locally, which would make the baseline cheaper. */
    private static final List<String> REQUIRED = List.of("remote_block_ids", "remote_engine_id", "remote_request_id",
            "remote_host", "remote_port");

    private static final int IDLE_CLOSE_SECONDS = 3;

    private final HttpClient client;
    private final URI prefill;
    private final URI decode;
    private final String model;
    private final int maxTokens;

    DirectLegs(Vertx vertx, URI prefill, URI decode, String model, int maxTokens, int poolSize) {
        // the gateway's connector client: HTTP/1.1, keep-alive, one connection per leg in flight. Idle connections
        // close after a few seconds, so that the next phase's target does not share the engines' open-file limit
        // with thousands of this phase's idle ones (20,000 a process on the benchmark machine).
        this.client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setMaxPoolSize(poolSize)
                .setKeepAliveTimeout(IDLE_CLOSE_SECONDS));
        this.prefill = prefill;
        this.decode = decode;
        this.model = model;
        this.maxTokens = maxTokens;
    }

    @Override
    public String key() {
        return "direct";
    }

    @Override
    public String name() {
        return "direct (two legs)";
    }

    @Override
    public void send(String requestId, String prompt, Listener listener) {
        ObjectNode body = common(prompt);
        body.put("max_tokens", 1);
        body.put("stream", false);
        body.set("kv_transfer_params", parse(PREFILL_PARAMS));
        StreamedCompletion.exchange(client, StreamedCompletion.post(prefill, requestId)
                .putHeader("Accept", "application/json"), write(body), head -> {
                    if (head.failed()) {
                        listener.failed("prefill leg", head.cause());
                        return;
                    }
                    HttpClientResponse response = head.result();
                    response.body().onComplete(answer -> {
                        if (answer.failed()) {
                            listener.failed("prefill leg", answer.cause());
                            return;
                        }
                        ObjectNode params;
                        try {
                            params = producerParams(response.statusCode(), answer.result());
                        } catch (RuntimeException e) {
                            listener.failed("prefill leg", e);
                            return;
                        }
                        decode(requestId, prompt, params, listener);
                    });
                });
    }

    /** The second leg, streamed, with the producer's parameters. */
    private void decode(String requestId, String prompt, ObjectNode params, Listener listener) {
        ObjectNode body = common(prompt);
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        body.set("kv_transfer_params", params);
        StreamedCompletion.send(client, StreamedCompletion.post(decode, requestId), write(body), maxTokens,
                "decode leg", listener);
    }

    /** The fields both legs share, in the connector's order. */
    private ObjectNode common(String prompt) {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", model);
        body.put("prompt", prompt);
        body.put("max_tokens", maxTokens);
        body.put("return_token_ids", true);
        return body;
    }

    private ObjectNode producerParams(int status, Buffer bytes) {
        if (status != 200 || bytes.length() == 0) {
            throw new IllegalStateException("HTTP " + status + ", " + bytes.length() + " bytes: "
                    + StreamedCompletion.abbreviate(bytes.toString()));
        }
        JsonNode answer = parse(bytes.toString());
        JsonNode params = answer.get("kv_transfer_params");
        if (params == null || !params.isObject()) {
            throw new IllegalStateException("the prefill answered no kv_transfer_params: "
                    + StreamedCompletion.abbreviate(answer.toString()));
        }
        for (String key : REQUIRED) {
            if (!params.hasNonNull(key)) {
                throw new IllegalStateException("the prefill's kv_transfer_params lack " + key);
            }
        }
        ObjectNode out = (ObjectNode) params;
        String host = out.get("remote_host").asText().toLowerCase(Locale.ROOT);
        if (host.equals("localhost") || host.startsWith("127.") || host.equals("::1")) {
            out.put("remote_host", prefill.getHost());
        }
        return out;
    }

    private static JsonNode parse(String text) {
        try {
            return JSON.readTree(text);
        } catch (IOException e) {
            throw new IllegalStateException("not JSON: " + StreamedCompletion.abbreviate(text), e);
        }
    }

    private static String write(JsonNode node) {
        try {
            return JSON.writeValueAsString(node);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
