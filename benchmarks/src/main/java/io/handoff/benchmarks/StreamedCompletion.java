package io.handoff.benchmarks;

import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;

import java.net.URI;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * POST {@code /v1/completions} with {@code stream: true} and read the events as they arrive, on the Vert.x client's
 * event loop: no thread waits per stream. Used for the direct decode leg and for the gateway's HTTP front alike.
 */
final class StreamedCompletion {

    static final String PATH = "/v1/completions";
    static final long IDLE_TIMEOUT_MS = TimeUnit.SECONDS.toMillis(60);

    private StreamedCompletion() {
    }

    static RequestOptions post(URI base, String requestId) {
        return new RequestOptions().setMethod(HttpMethod.POST).setHost(base.getHost()).setPort(base.getPort())
                .setURI(PATH).setIdleTimeout(IDLE_TIMEOUT_MS)
                .putHeader("Content-Type", "application/json")
                .putHeader("X-Request-Id", requestId);
    }

    /**
     * Sends {@code body} and hands over the response head. The handler is put on the send future itself, not on a
     * future composed from it: that one completes on the request's own context in the same task as the response
     * head, so whatever the handler sets up (a body handler, {@code body()}) is in place before the first byte of
     * the body is delivered. A listener one composition further may run a task later, after the body went by.
     */
    static void exchange(HttpClient client, RequestOptions options, String body,
            Handler<AsyncResult<HttpClientResponse>> onResponse) {
        client.request(options).onComplete(ar -> {
            if (ar.failed()) {
                onResponse.handle(Future.failedFuture(ar.cause()));
            } else {
                ar.result().send(Buffer.buffer(body)).onComplete(onResponse);
            }
        });
    }

    /** Sends {@code body} and reports the first token chunk, then a whole stream of {@code expected} tokens. */
    static void send(HttpClient client, RequestOptions options, String body, int expected, String operation,
            Target.Listener listener) {
        AtomicBoolean over = new AtomicBoolean();
        exchange(client, options.putHeader("Accept", "text/event-stream"), body, ar -> {
            if (ar.failed()) {
                end(over, () -> listener.failed(operation, ar.cause()));
            } else {
                read(ar.result(), expected, operation, listener, over);
            }
        });
    }

    private static void read(HttpClientResponse response, int expected, String operation, Target.Listener listener,
            AtomicBoolean over) {
        if (response.statusCode() != 200) {
            response.body().onComplete(b -> end(over, () -> listener.failed(operation, new IllegalStateException(
                    "HTTP " + response.statusCode() + ": " + (b.succeeded() ? abbreviate(b.result().toString())
                            : b.cause())))));
            return;
        }
        SseStream stream = new SseStream();
        response.handler(bytes -> {
            if (stream.feed(bytes)) {
                listener.firstToken();
            }
        });
        response.exceptionHandler(t -> end(over, () -> listener.failed(operation, t)));
        response.endHandler(v -> {
            String problem = stream.problem(expected);
            end(over, problem == null ? listener::completed
                    : () -> listener.failed(operation, new IllegalStateException(problem)));
        });
    }

    /** A response can fail after its end (or twice); the listener hears the first ending only. */
    private static void end(AtomicBoolean over, Runnable ending) {
        if (over.compareAndSet(false, true)) {
            ending.run();
        }
    }

    static String abbreviate(String text) {
        return text.length() > 300 ? text.substring(0, 300) + "..." : text;
    }
}
