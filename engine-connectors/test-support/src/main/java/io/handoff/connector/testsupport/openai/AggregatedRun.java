package io.handoff.connector.testsupport.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.connector.openai.completion.StructJson;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.InputKind;
import io.handoff.openengine.v1.GenerateRequest;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/**
 * The reference answer of a fleet: the request sent as an ordinary, aggregated request (no handoff field) to an
 * engine that prefills and decodes itself: {@code /v1/completions} with the prompt, or for a chat
 * ({@link InputKind#CHAT_MESSAGES}) {@code /v1/chat/completions} with the messages.
 */
public final class AggregatedRun {

    private AggregatedRun() {
    }

    public static String text(HttpClient http, String baseUrl, String model, GenerateRequest request) {
        boolean chat = InputKind.isChat(request);
        ObjectNode body = Json.object().put("model", model);
        if (chat) {
            body.set("messages", StructJson.toJson(InputKind.messages(request)));
        } else {
            body.put("prompt", request.getPrompt());
        }
        body.put("max_tokens", request.getStopping().getMaxTokens()).put("stream", false);
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(baseUrl
                    + (chat ? "/v1/chat/completions" : "/v1/completions"))).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(Json.write(body))).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new AssertionError("aggregated run failed: " + r.statusCode() + " " + r.body());
            }
            JsonNode choice = Json.parse(r.body()).path("choices").path(0);
            return chat ? choice.path("message").path("content").asText() : choice.path("text").asText();
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
