package io.handoff.connector.vllm;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.testsupport.openai.WireMockEnginePair;

import java.util.Map;

/** A vLLM producer and consumer (NixlConnector, pull) on WireMock, and the vLLM connector pointed at them. */
final class WireMockRig extends WireMockEnginePair {

    static final String MODEL = "m";
    private static final Route ROUTE = new Route("vllm", "route-a", MODEL, "prefill-0", "decode-0");

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

    WireMockRig(Map<String, String> options) {
        super(ROUTE, options);
    }

    static WireMockRig fixedHold() {
        return new WireMockRig(Map.of("hold-mode", "fixed"));
    }

    static ConnectorService service() {
        return ROUTE.service();
    }

    static ConnectorConfig config(Map<String, String> options, Endpoint prefill, Endpoint decode) {
        return ROUTE.config(options, prefill, decode);
    }

    /** The producer parks and answers with {@code params} (raw JSON, or "null"). */
    void producerAnswers(String finishReason, String params) {
        answersJson(prefillEngine, COMPLETIONS, "{\"id\":\"cmpl-r1\",\"object\":\"text_completion\",\"model\":\"m\","
                + "\"choices\":[{\"index\":0,\"text\":\" The\",\"token_ids\":[464],\"logprobs\":null,"
                + "\"finish_reason\":\"" + finishReason + "\",\"stop_reason\":null}],\"usage\":{\"prompt_tokens\":4,"
                + "\"completion_tokens\":1,\"total_tokens\":5},\"kv_transfer_params\":" + params + "}");
    }

    /** The producer answers the prefill with this body, exactly. */
    void producerAnswersWith(String body) {
        answersJson(prefillEngine, COMPLETIONS, body);
    }

    /** The producer parks a chat and answers as vLLM's /v1/chat/completions does. */
    void producerAnswersChat(String finishReason, String params) {
        answersJson(prefillEngine, CHAT_COMPLETIONS, "{\"id\":\"chatcmpl-r1\",\"object\":\"chat.completion\","
                + "\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\" The\","
                + "\"tool_calls\":[]},\"token_ids\":[464],\"logprobs\":null,\"finish_reason\":\"" + finishReason
                + "\",\"stop_reason\":null}],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":1,"
                + "\"total_tokens\":5},\"kv_transfer_params\":" + params + "}");
    }

    void consumerStreams(String sse) {
        streams(decodeEngine, COMPLETIONS, sse);
    }

    void consumerStreamsChat(String sse) {
        streams(decodeEngine, CHAT_COMPLETIONS, sse);
    }
}
