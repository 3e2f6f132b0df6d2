package io.handoff.connector.sglang;

import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.testsupport.openai.WireMockEnginePair;
import io.handoff.openengine.v1.GenerateResponse;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;

/** An SGLang prefill and decode server in PD mode on WireMock, and the SGLang connector pointed at them. */
final class WireMockRig extends WireMockEnginePair {

    static final String MODEL = "m";
    private static final Route ROUTE = new Route("sglang", "route-s", MODEL, "prefill-0", "decode-0");

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

    WireMockRig(Map<String, String> options) {
        super(ROUTE, options);
        prefillEngine.stubFor(post(urlEqualTo("/abort_request")).willReturn(aResponse().withStatus(200)));
        decodeEngine.stubFor(post(urlEqualTo("/abort_request")).willReturn(aResponse().withStatus(200)));
    }

    static WireMockRig standard() {
        return new WireMockRig(Map.of("bootstrap-port.prefill-0", "9100", "idle-timeout-seconds", "2"));
    }

    void producerAnswers(String json) {
        answersJson(prefillEngine, COMPLETIONS, json);
    }

    void producerAnswersChat(String json) {
        answersJson(prefillEngine, CHAT_COMPLETIONS, json);
    }

    void consumerStreams(String sse) {
        streams(decodeEngine, COMPLETIONS, sse);
    }

    void consumerStreamsChat(String sse) {
        streams(decodeEngine, CHAT_COMPLETIONS, sse);
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
}
