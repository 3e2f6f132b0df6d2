package io.handoff.gateway.api.edge;

import com.fasterxml.jackson.databind.JsonNode;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * Sends a bad input and judges the answer. A refusal is clear when it is a 4xx whose body is the OpenAI error shape
 * ({@code {"error": {"message": ...}}}), or a gRPC status that names the caller's fault with a description. A 5xx,
 * INTERNAL, UNKNOWN, a success, a dropped connection or no answer within the deadline is a defect.
 */
final class Refusals {

    static final Duration DEADLINE = Duration.ofSeconds(20);

    /** The statuses by which gRPC says the call was the caller's fault (or is not served). */
    static final Set<Status.Code> CALLER_FAULTS = Set.of(Status.Code.INVALID_ARGUMENT, Status.Code.NOT_FOUND,
            Status.Code.UNAUTHENTICATED, Status.Code.PERMISSION_DENIED, Status.Code.FAILED_PRECONDITION,
            Status.Code.OUT_OF_RANGE, Status.Code.RESOURCE_EXHAUSTED, Status.Code.UNIMPLEMENTED);

    /** How one input was answered: the code ({@code 400}, {@code INVALID_ARGUMENT}) and, for a defect, what is wrong. */
    record Verdict(String code, String defect) {
        boolean refused() {
            return defect == null;
        }
    }

    private final HttpClient http;
    private final String base;
    private final ManagedChannel channel;

    Refusals(String base, ManagedChannel channel) {
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(DEADLINE).build();
        this.base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        this.channel = channel;
    }

    Verdict judge(BadInput input) {
        return input instanceof BadInput.Http h ? judge(h) : judge((BadInput.Grpc) input);
    }

    private Verdict judge(BadInput.Http input) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + input.path())).timeout(DEADLINE)
                .method(input.method(), input.method().equals("GET") ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(input.body()));
        for (Map.Entry<String, String> h : input.headers()) {
            request.header(h.getKey(), h.getValue());
        }
        HttpResponse<byte[]> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (HttpTimeoutException e) {
            return new Verdict("timeout", "no answer within " + DEADLINE);
        } catch (IOException e) {
            return new Verdict("io-error", "the connection failed: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        String code = Integer.toString(response.statusCode());
        if (response.statusCode() < 400 || response.statusCode() >= 500) {
            return new Verdict(code, "answered " + code + ": " + BadInput.Shown.bytes(response.body()));
        }
        try {
            JsonNode message = JsonFaults.JSON.readTree(response.body()).path("error").path("message");
            if (!message.isTextual() || message.asText().isBlank()) {
                return new Verdict(code, "no error message in " + BadInput.Shown.bytes(response.body()));
            }
        } catch (IOException e) {
            return new Verdict(code, "the error body is not JSON: " + BadInput.Shown.bytes(response.body()));
        }
        return new Verdict(code, null);
    }

    private Verdict judge(BadInput.Grpc input) {
        Metadata md = new Metadata();
        input.metadata().forEach(e -> md.put(Metadata.Key.of(e.getKey(), Metadata.ASCII_STRING_MARSHALLER),
                e.getValue()));
        RawGrpc.Answer answer = RawGrpc.call(channel, input.fullMethod(), input.streaming(), md, input.message(),
                DEADLINE.toMillis());
        Status status = answer.status();
        String code = status.getCode().name();
        if (!CALLER_FAULTS.contains(status.getCode())) {
            return new Verdict(code, "answered " + status + " after " + answer.messages() + " messages");
        }
        if (status.getDescription() == null || status.getDescription().isBlank()) {
            return new Verdict(code, "no description with " + code);
        }
        return new Verdict(code, null);
    }
}
