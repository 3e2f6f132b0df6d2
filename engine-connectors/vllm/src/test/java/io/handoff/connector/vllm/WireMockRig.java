package io.handoff.connector.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineConnector;
import io.vertx.core.Vertx;

import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;

/**
 * Two WireMock servers on loopback standing in for a vLLM producer and consumer, and the connector (found through
 * ServiceLoader, as the gateway finds it) pointed at them.
 */
final class WireMockRig implements AutoCloseable {

    static final String MODEL = "m";
    static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    /** A producer answer of a NIXL build: block ids beyond 2^53 and a float must reach the consumer unchanged. */
    static final String PRODUCER_PARAMS = "{\"do_remote_prefill\":true,\"do_remote_decode\":false,"
            + "\"remote_block_ids\":[[9007199254740993,58]],\"remote_engine_id\":\"eng-1\","
            + "\"remote_request_id\":\"cmpl-r1-abcd1234\",\"remote_host\":\"localhost\",\"remote_port\":5600,"
            + "\"tp_size\":1,\"remote_blocks_expiry_time\":1.0E9,\"transfer_mode\":\"pull\"}";

    static final String DECODE_STREAM = """
            data: {"id":"cmpl-r1","object":"text_completion","model":"m","choices":[{"index":0,"text":" quick","token_ids":[2068],"logprobs":null,"finish_reason":null,"stop_reason":null}]}

            data: {"id":"cmpl-r1","object":"text_completion","model":"m","choices":[{"index":0,"text":" fox","token_ids":[21831],"logprobs":null,"finish_reason":"length","stop_reason":null}]}

            data: {"id":"cmpl-r1","object":"text_completion","model":"m","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}

            data: [DONE]

            """;

    /** A chat decode stream as vLLM sends it: the role chunk first, content deltas, the finish, the usage chunk. */
    static final String CHAT_DECODE_STREAM = """
            data: {"id":"chatcmpl-r1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":[1,2,3,4]}

            data: {"id":"chatcmpl-r1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":" quick"},"token_ids":[2068],"logprobs":null,"finish_reason":null}]}

            data: {"id":"chatcmpl-r1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":" fox"},"token_ids":[21831],"logprobs":null,"finish_reason":"length","stop_reason":null}]}

            data: {"id":"chatcmpl-r1","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}

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
    }

    static WireMockRig fixedHold() {
        return new WireMockRig(Map.of("hold-mode", "fixed"));
    }

    static ConnectorService service() {
        return ServiceLoader.load(ConnectorService.class).stream().map(ServiceLoader.Provider::get)
                .filter(s -> s.family().equals("vllm")).findFirst().orElseThrow();
    }

    static ConnectorConfig config(Map<String, String> options, Endpoint prefill, Endpoint decode) {
        return new ConnectorConfig("route-a", MODEL, List.of(prefill), List.of(decode), new HashMap<>(options));
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

    /** The producer parks and answers with {@code params} (raw JSON, or "null"). */
    void producerAnswers(String finishReason, String params) {
        producer.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json")
                .withBody("{\"id\":\"cmpl-r1\",\"object\":\"text_completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
                        + "\"text\":\" The\",\"token_ids\":[464],\"logprobs\":null,\"finish_reason\":\""
                        + finishReason + "\",\"stop_reason\":null}],\"usage\":{\"prompt_tokens\":4,"
                        + "\"completion_tokens\":1,\"total_tokens\":5},\"kv_transfer_params\":" + params + "}")));
    }

    /** The producer parks a chat and answers as vLLM's /v1/chat/completions does. */
    void producerAnswersChat(String finishReason, String params) {
        producer.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json")
                .withBody("{\"id\":\"chatcmpl-r1\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":"
                        + "[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\" The\",\"tool_calls\":[]},"
                        + "\"token_ids\":[464],\"logprobs\":null,\"finish_reason\":\"" + finishReason + "\","
                        + "\"stop_reason\":null}],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":1,"
                        + "\"total_tokens\":5},\"kv_transfer_params\":" + params + "}")));
    }

    void consumerStreamsChat(String sse) {
        consumer.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(sse)));
    }

    void consumerStreams(String sse) {
        consumer.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(sse)));
    }

    /** The JSON bodies a server received, oldest first. */
    static List<JsonNode> bodies(WireMockServer server) {
        return requests(server).stream().map(e -> Json.parse(e.getRequest().getBodyAsString())).toList();
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
