package io.handoff.gateway.api.rest;

import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.ValidatableResponse;
import io.restassured.specification.RequestSpecification;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;

import static org.hamcrest.Matchers.emptyOrNullString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;

/** Real HTTP on loopback to /v1/kv-sessions, as a given API key. */
final class RestCalls {

    private RestCalls() {
    }

    static RequestSpecification as(String apiKey) {
        return RestAssured.given().header("Authorization", "Bearer " + apiKey).contentType(ContentType.JSON);
    }

    /**
     * A POST with no body and no Content-Type, as {@code curl -X POST} sends it (RestAssured would add a form
     * content type). Answers status and body.
     */
    static HttpResponse<String> barePost(String path, String header, String value) {
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create(RestAssured.baseURI + ":" + RestAssured.port
                    + path)).header(header, value).POST(HttpRequest.BodyPublishers.noBody()).build();
            return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static String newKey() {
        return "key-" + UUID.randomUUID();
    }

    /** A minimal valid allocation body with a fresh request id. */
    static String allocation() {
        return "{\"request_id\":\"req-" + UUID.randomUUID() + "\",\"model\":\"llama\"}";
    }

    static ValidatableResponse allocate(String apiKey, String idempotencyKey, String body) {
        return as(apiKey).header("Idempotency-Key", idempotencyKey).body(body).post("/v1/kv-sessions").then();
    }

    static String allocateId(String apiKey) {
        return allocate(apiKey, newKey(), allocation()).statusCode(201).extract().path("id");
    }

    /** Asserts the OpenAI error shape, and that the refusal is the one expected. */
    static ValidatableResponse refused(ValidatableResponse response, int status, String type, String code) {
        return response.statusCode(status).contentType(ContentType.JSON)
                .body("error.type", equalTo(type))
                .body("error.code", code == null ? nullValue() : equalTo(code))
                .body("error.message", not(emptyOrNullString()))
                .body("error", hasKey("param"));
    }
}
