package io.handoff.gateway.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/**
 * The engine's own answer to a prompt without any disaggregation: a plain non-streaming completion on the family's
 * aggregated engine, the reference a handed-off answer must equal.
 */
public final class ReferenceAnswers {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private ReferenceAnswers() {
    }

    public static String text(FamilyEngines family, String prompt, int maxTokens) {
        ObjectNode body = JSON.createObjectNode().put("model", EngineFleet.ENGINE_MODEL).put("prompt", prompt)
                .put("max_tokens", maxTokens).put("stream", false);
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(family.aggregated().baseUrl()
                    + "/v1/completions")).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new AssertionError("aggregated run on " + family + " failed: " + r.statusCode() + " " + r.body());
            }
            JsonNode answer = JSON.readTree(r.body());
            return answer.path("choices").path(0).path("text").asText();
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
