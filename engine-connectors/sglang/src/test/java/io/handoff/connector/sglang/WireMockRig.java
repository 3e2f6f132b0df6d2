package io.handoff.connector.sglang;

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
import io.handoff.connector.spi.PrefillResult;
import io.handoff.openengine.v1.GenerateResponse;
import io.vertx.core.Vertx;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;

/**
 * Two WireMock servers on loopback standing in for an SGLang prefill and decode server, and the connector (found
 * through ServiceLoader, as the gateway finds it) pointed at them.
 */
final class WireMockRig implements AutoCloseable {

    static final String MODEL = "m";
    static final Duration WAIT = Duration.ofSeconds(10);
    static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    static final String PREFILL_ANSWER = "{\"id\":\"cmpl-x\",\"object\":\"text_completion\",\"model\":\"m\","
            + "\"choices\":[{\"index\":0,\"text\":\" quick\",\"logprobs\":null,\"finish_reason\":\"length\","
            + "\"matched_stop\":null}],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":1,\"total_tokens\":5}}";

    static final String DECODE_STREAM = """
            data: {"id":"cmpl-x","object":"text_completion","model":"m","choices":[{"index":0,"text":" quick","logprobs":null,"finish_reason":null,"matched_stop":null}]}

            data: {"id":"cmpl-x","object":"text_completion","model":"m","choices":[{"index":0,"text":" fox","logprobs":null,"finish_reason":"stop","matched_stop":"END"}]}

            data: {"id":"cmpl-x","object":"text_completion","model":"m","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}

            data: [DONE]

            """;

    static final String CHAT_PREFILL_ANSWER = "{\"id\":\"x\",\"object\":\"chat.completion\",\"model\":\"m\","
            + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\" quick\","
            + "\"reasoning_content\":null,\"tool_calls\":null},\"logprobs\":null,\"finish_reason\":\"length\","
            + "\"matched_stop\":null}],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":1,\"total_tokens\":5}}";

    static final String CHAT_DECODE_STREAM = """
            data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null,"matched_stop":null}]}

            data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":" quick"},"logprobs":null,"finish_reason":null,"matched_stop":null}]}

            data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":" fox"},"logprobs":null,"finish_reason":"stop","matched_stop":"END"}]}

            data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}

            data: [DONE]

            """;

    final WireMockServer producer = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
    final WireMockServer consumer = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
    final Vertx vertx = Vertx.vertx();
    final MutableClock clock = new MutableClock(START);
    final Endpoint prefill;
    final Endpoint decode;
    final EngineConnector connector;

    WireMockRig(Map<String, String> options) {
        producer.start();
        consumer.start();
        prefill = Endpoint.of("prefill-0", "http://127.0.0.1:" + producer.port());
        decode = Endpoint.of("decode-0", "http://127.0.0.1:" + consumer.port());
        connector = service().create(config(options, prefill, decode), context(vertx, clock));
        producer.stubFor(post(urlEqualTo("/abort_request")).willReturn(aResponse().withStatus(200)));
        consumer.stubFor(post(urlEqualTo("/abort_request")).willReturn(aResponse().withStatus(200)));
    }

    static WireMockRig standard() {
        return new WireMockRig(Map.of("bootstrap-port.prefill-0", "9100", "idle-timeout-seconds", "2"));
    }

    static ConnectorService service() {
        return ServiceLoader.load(ConnectorService.class).stream().map(ServiceLoader.Provider::get)
                .filter(s -> s.family().equals("sglang")).findFirst().orElseThrow();
    }

    static ConnectorConfig config(Map<String, String> options, Endpoint prefill, Endpoint decode) {
        return new ConnectorConfig("route-s", MODEL, List.of(prefill), List.of(decode), new HashMap<>(options));
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

    void producerAnswers(String json) {
        producer.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json").withBody(json)));
    }

    void producerAnswersChat(String json) {
        producer.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json").withBody(json)));
    }

    void consumerStreamsChat(String sse) {
        consumer.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(sse)));
    }

    void consumerStreams(String sse) {
        consumer.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(sse)));
    }

    /** Runs both legs as the gateway does for the handoff's style: the decode subscribed first, then the prefill. */
    Run run(Handoff handoff) {
        CompletableFuture<List<GenerateResponse>> decodeLeg = connector.decode(handoff).collect().asList()
                .subscribeAsCompletionStage();
        CompletableFuture<PrefillResult> prefillLeg = connector.prefill(handoff).subscribeAsCompletionStage();
        return new Run(prefillLeg, decodeLeg);
    }

    record Run(CompletableFuture<PrefillResult> prefill, CompletableFuture<List<GenerateResponse>> decode) {
        PrefillResult prefillResult() throws Exception {
            return prefill.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }

        List<GenerateResponse> events() throws Exception {
            return decode.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** The JSON bodies of the completion calls a server received, oldest first. */
    static List<JsonNode> bodies(WireMockServer server, String path) {
        return requests(server).stream().filter(e -> e.getRequest().getUrl().equals(path))
                .map(e -> Json.parse(e.getRequest().getBodyAsString())).toList();
    }

    static List<ServeEvent> requests(WireMockServer server) {
        List<ServeEvent> events = new java.util.ArrayList<>(server.getAllServeEvents());
        java.util.Collections.reverse(events); // WireMock lists newest first
        return events;
    }

    int sent() {
        return producer.getAllServeEvents().size() + consumer.getAllServeEvents().size();
    }

    @Override
    public void close() {
        connector.close();
        producer.stop();
        consumer.stop();
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }
}
