package io.handoff.connector.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.testsupport.openai.WireMockEnginePair;

import java.util.List;
import java.util.Map;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;

/**
 * A trtllm-serve context worker (the prefill engine) and generation worker (the decode engine) on WireMock, and the
 * TensorRT-LLM connector pointed at them.
 */
final class WireMockRig extends WireMockEnginePair {

    static final String MODEL = "m";
    private static final Route ROUTE = new Route("trtllm", "route-t", MODEL, "ctx-0", "gen-0");
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

    WireMockRig(Map<String, String> options) {
        super(ROUTE, options);
    }

    WireMockRig() {
        this(Map.of());
    }

    static ConnectorService service() {
        return ROUTE.service();
    }

    static ConnectorConfig config(Map<String, String> options, Endpoint prefill, Endpoint decode) {
        return ROUTE.config(options, prefill, decode);
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
        answersJson(prefillEngine, CHAT_COMPLETIONS, chatContextAnswer(id(handoff), finishReason,
                handoff.style().ordinal()));
    }

    void chatGenerationStreams(String sse) {
        streams(decodeEngine, CHAT_COMPLETIONS, sse);
    }

    void contextAnswers(String body) {
        answersJson(prefillEngine, COMPLETIONS, body);
    }

    void contextAnswers(Handoff handoff, String finishReason) {
        contextAnswers(contextAnswer(id(handoff), finishReason, handoff.style().ordinal()));
    }

    void serverInfo() {
        prefillEngine.stubFor(get(urlEqualTo("/server_info")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json")
                .withBody("{\"disaggregated_params\":{\"ctx_dp_rank\":0,\"ctx_info_endpoint\":[\"" + INFO_ENDPOINT
                        + "\"]}}")));
    }

    void generationStreams(String sse) {
        streams(decodeEngine, COMPLETIONS, sse);
    }

    /** The JSON bodies a worker received on /v1/completions, oldest first. */
    static List<JsonNode> completionBodies(WireMockServer worker) {
        return bodies(worker, COMPLETIONS);
    }

    /** The JSON bodies a worker received on /v1/chat/completions, oldest first. */
    static List<JsonNode> chatBodies(WireMockServer worker) {
        return bodies(worker, CHAT_COMPLETIONS);
    }
}
