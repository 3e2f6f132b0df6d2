package io.handoff.connector.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.Handoff;
import io.vertx.core.Vertx;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;

/**
 * Two WireMock servers on loopback standing in for a trtllm-serve context worker and generation worker, and the
 * connector (found through ServiceLoader, as the gateway finds it) pointed at them.
 */
final class WireMockRig implements AutoCloseable {

    static final String MODEL = "m";
    static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    static final Duration WAIT = Duration.ofSeconds(10);
    static final String OPAQUE = "eyJpbnN0YW5jZSI6ImEiLCJwb3J0Ijo1fQ==";
    static final String INFO_ENDPOINT = "tcp://10.0.0.5:38671";

    static final String GENERATION_STREAM = """
            data: {"id":"cmpl-g1","object":"text_completion","created":1767225600,"model":"m","choices":[{"index":0,"text":" it","token_ids":null,"logprobs":null,"finish_reason":null,"stop_reason":null,"avg_decoded_tokens_per_iter":null}],"usage":null}

            data: {"id":"cmpl-g1","object":"text_completion","created":1767225600,"model":"m","choices":[{"index":0,"text":" is","token_ids":null,"logprobs":null,"finish_reason":"length","stop_reason":null,"avg_decoded_tokens_per_iter":null}],"usage":null}

            data: {"id":"cmpl-g1","object":"text_completion","created":1767225600,"model":"m","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}

            data: [DONE]

            """;

    /** A chat generation stream as trtllm-serve sends it: the role chunk, content deltas, the usage chunk. */
    static final String CHAT_GENERATION_STREAM = """
            data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1767225600,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}

            data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1767225600,"model":"m","choices":[{"index":0,"delta":{"content":" it"},"logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}

            data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1767225600,"model":"m","choices":[{"index":0,"delta":{"content":" is"},"logprobs":null,"finish_reason":"length","stop_reason":null}],"usage":null}

            data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1767225600,"model":"m","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}

            data: [DONE]

            """;

    final WireMockServer ctx = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
    final WireMockServer gen = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
    final Vertx vertx = Vertx.vertx();
    final MutableClock clock = new MutableClock(START);
    final Endpoint prefill;
    final Endpoint decode;
    final EngineConnector connector;

    WireMockRig(Map<String, String> options) {
        ctx.start();
        gen.start();
        prefill = Endpoint.of("ctx-0", "http://127.0.0.1:" + ctx.port());
        decode = Endpoint.of("gen-0", "http://127.0.0.1:" + gen.port());
        connector = service().create(config(options, prefill, decode), context(vertx, clock));
    }

    WireMockRig() {
        this(Map.of());
    }

    static ConnectorService service() {
        return ServiceLoader.load(ConnectorService.class).stream().map(ServiceLoader.Provider::get)
                .filter(s -> s.family().equals("trtllm")).findFirst().orElseThrow();
    }

    static ConnectorConfig config(Map<String, String> options, Endpoint prefill, Endpoint decode) {
        return new ConnectorConfig("route-t", MODEL, List.of(prefill), List.of(decode), new HashMap<>(options));
    }

    static ConnectorContext context(Vertx vertx, Clock clock) {
        return new ConnectorContext() {
            @Override
            public Vertx vertx() {
                return vertx;
            }

            @Override
            public Clock clock() {
                return clock;
            }
        };
    }

    static String id(Handoff handoff) {
        return handoff.nativeIds().get("disagg_request_id");
    }

    /** The context answer trtllm-serve gives for {@code id}, in schedule style {@code style}. */
    static String contextAnswer(String id, String finishReason, int style) {
        return "{\"id\":\"cmpl-c1\",\"object\":\"text_completion\",\"created\":1767225600,\"model\":\"m\","
                + "\"choices\":[{\"index\":0,\"text\":\" it\",\"token_ids\":null,\"finish_reason\":\"" + finishReason
                + "\",\"stop_reason\":null,\"disaggregated_params\":{\"request_type\":\"context_only\","
                + "\"first_gen_tokens\":[433],\"ctx_request_id\":" + id + ",\"encoded_opaque_state\":\"" + OPAQUE
                + "\",\"draft_tokens\":null,\"disagg_request_id\":" + id + ",\"ctx_dp_rank\":0,"
                + "\"ctx_info_endpoint\":null,\"schedule_style\":" + style + "}}],"
                + "\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":1,\"total_tokens\":5,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":0}},\"prompt_token_ids\":[1,405,8784,338]}";
    }

    /** The chat context answer trtllm-serve gives: the message, disaggregated_params, the prompt's token ids. */
    static String chatContextAnswer(String id, String finishReason, int style) {
        return "{\"id\":\"chatcmpl-c1\",\"object\":\"chat.completion\",\"created\":1767225600,\"model\":\"m\","
                + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\" it\","
                + "\"tool_calls\":[]},\"finish_reason\":\"" + finishReason + "\",\"stop_reason\":null,"
                + "\"disaggregated_params\":{\"request_type\":\"context_only\",\"first_gen_tokens\":[433],"
                + "\"ctx_request_id\":" + id + ",\"encoded_opaque_state\":\"" + OPAQUE + "\",\"draft_tokens\":null,"
                + "\"disagg_request_id\":" + id + ",\"ctx_dp_rank\":0,\"ctx_info_endpoint\":null,"
                + "\"schedule_style\":" + style + "}}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":1,"
                + "\"total_tokens\":10},\"prompt_token_ids\":[1,32,405,8784,338,2,32,9,7]}";
    }

    void chatContextAnswers(Handoff handoff, String finishReason) {
        ctx.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json")
                .withBody(chatContextAnswer(id(handoff), finishReason, handoff.style().ordinal()))));
    }

    void chatGenerationStreams(String sse) {
        gen.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(sse)));
    }

    /** The JSON bodies a server received on the chat endpoint, oldest first. */
    static List<JsonNode> chatBodies(WireMockServer server) {
        return requests(server).stream().filter(e -> e.getRequest().getUrl().equals("/v1/chat/completions"))
                .map(e -> Json.parse(e.getRequest().getBodyAsString())).toList();
    }

    void contextAnswers(String body) {
        ctx.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json").withBody(body)));
    }

    void contextAnswers(Handoff handoff, String finishReason) {
        contextAnswers(contextAnswer(id(handoff), finishReason, handoff.style().ordinal()));
    }

    void serverInfo() {
        ctx.stubFor(get(urlEqualTo("/server_info")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json")
                .withBody("{\"disaggregated_params\":{\"ctx_dp_rank\":0,\"ctx_info_endpoint\":[\"" + INFO_ENDPOINT
                        + "\"]}}")));
    }

    void generationStreams(String sse) {
        gen.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(sse)));
    }

    static List<JsonNode> bodies(WireMockServer server) {
        return requests(server).stream().filter(e -> e.getRequest().getUrl().equals("/v1/completions"))
                .map(e -> Json.parse(e.getRequest().getBodyAsString())).toList();
    }

    static List<ServeEvent> requests(WireMockServer server) {
        List<ServeEvent> events = new java.util.ArrayList<>(server.getAllServeEvents());
        java.util.Collections.reverse(events); // WireMock lists newest first
        return events;
    }

    int sent() {
        return ctx.getAllServeEvents().size() + gen.getAllServeEvents().size();
    }

    @Override
    public void close() {
        connector.close();
        ctx.stop();
        gen.stop();
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }
}
