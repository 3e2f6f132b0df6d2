package io.handoff.connector.openai.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineException;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.MultiEmitter;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.tracing.TracingPolicy;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The non-blocking HTTP client of one connector, over Vert.x. Every call is lazy (nothing is sent before
 * subscription) and cancellable: cancelling a subscription resets the exchange, which over HTTP/1.1 closes its
 * connection; engines whose only abort is a closed connection see exactly that. Failures arrive as
 * {@link io.handoff.connector.spi.EngineException} (see {@link HttpFailures}), whose messages name the endpoint by its
 * configured name, never by its address: they may reach clients. The address is in the failure's cause.
 */
public final class EngineHttpClient implements AutoCloseable {

    private final ConnectionShards shards;
    private final ClientSettings settings;

    public EngineHttpClient(Vertx vertx, ClientSettings settings) {
        this.settings = settings;
        // The trace context an engine sees is the one the gateway hands over for the leg (the connector forwards
        // it as headers); a tracer installed on the Vert.x instance must neither add a span of its own nor
        // replace those headers with its own traceparent.
        this.shards = new ConnectionShards(vertx, settings.poolSize(), connections -> vertx.createHttpClient(
                new HttpClientOptions()
                        .setConnectTimeout((int) settings.connectTimeout().toMillis())
                        .setMaxPoolSize(connections)
                        .setKeepAlive(true)
                        .setTracingPolicy(TracingPolicy.IGNORE)));
    }

    /** A GET whose whole answer is returned, whatever its status (discovery reads non-2xx too). */
    public Uni<HttpReply> get(Endpoint endpoint, String path, Duration timeout) {
        RequestOptions options = options(HttpMethod.GET, endpoint.uri(), path, Map.of(), timeout);
        String what = "GET " + path + " on " + endpoint.name();
        return Uni.createFrom().emitter(em -> new WholeAnswerExchange<HttpReply>(shards, options, null, what, em) {
            @Override
            void onAnswer(int status, Buffer answer) {
                succeed(() -> em.complete(new HttpReply(status, answer.toString())));
            }
        }.start(em::onTermination));
    }

    /** POSTs a JSON body and returns the JSON answer; a non-2xx status fails with what the engine said. */
    public Uni<JsonNode> postJson(Endpoint endpoint, String path, Map<String, String> headers, JsonNode body) {
        RequestOptions options = options(HttpMethod.POST, endpoint.uri(), path, headers, settings.idleTimeout())
                .putHeader("Content-Type", "application/json")
                .putHeader("Accept", "application/json");
        String what = "POST " + path + " on " + endpoint.name();
        return Uni.createFrom().emitter(em -> new WholeAnswerExchange<JsonNode>(shards, options, requestBody(body),
                what, em) {
            @Override
            void onAnswer(int status, Buffer answer) {
                if (status < 200 || status >= 300) {
                    succeed(() -> em.fail(HttpFailures.fromStatus(status, answer.toString(), what)));
                    return;
                }
                JsonNode json;
                try {
                    json = Json.parse(answer.getBytes());
                } catch (IllegalArgumentException e) {
                    succeed(() -> em.fail(HttpFailures.badAnswer(what, e)));
                    return;
                }
                succeed(() -> em.complete(json));
            }
        }.start(em::onTermination));
    }

    /**
     * POSTs a JSON body and streams the answer's Server-Sent Events as JSON objects, ending at {@code data: [DONE]}.
     * A stream that ends without [DONE] fails (it was cut); an error event ({@code data: {"error":...}}, or an
     * error object of its own, {@code data: {"object":"error",...}}) fails.
     */
    public Multi<JsonNode> postSse(Endpoint endpoint, String path, Map<String, String> headers, JsonNode body) {
        return postSse(endpoint, path, headers, body, SseEvents.JSON);
    }

    /**
     * As {@link #postSse(Endpoint, String, Map, JsonNode)}, each event read by {@code events}: a payload it cannot
     * read fails the stream as a bad answer, an error it reports fails the stream with that error.
     */
    public <T> Multi<T> postSse(Endpoint endpoint, String path, Map<String, String> headers, JsonNode body,
            SseEvents<T> events) {
        RequestOptions options = options(HttpMethod.POST, endpoint.uri(), path, headers, settings.idleTimeout())
                .putHeader("Content-Type", "application/json")
                .putHeader("Accept", "text/event-stream");
        String what = "POST " + path + " on " + endpoint.name();
        return Multi.createFrom().emitter(em -> new SseExchange<>(shards, options, requestBody(body), what, events,
                em).start(em::onTermination));
    }

    private static Buffer requestBody(JsonNode body) {
        return Buffer.buffer(Json.bytes(body));
    }

    /** Host, port and path set apart rather than as one absolute URI, which Vert.x would parse again as a URL. */
    private static RequestOptions options(HttpMethod method, URI base, String path, Map<String, String> headers,
            Duration idleTimeout) {
        boolean tls = "https".equalsIgnoreCase(base.getScheme());
        String prefix = base.getRawPath() == null ? "" : base.getRawPath();
        if (prefix.endsWith("/")) {
            prefix = prefix.substring(0, prefix.length() - 1);
        }
        RequestOptions options = new RequestOptions()
                .setMethod(method)
                .setSsl(tls)
                .setHost(base.getHost())
                .setPort(base.getPort() != -1 ? base.getPort() : tls ? 443 : 80)
                .setURI(prefix + path)
                .setIdleTimeout(idleTimeout.toMillis());
        headers.forEach(options::putHeader);
        return options;
    }

    /** Exchanges started and not yet ended, over every endpoint: each holds (or waits for) a connection. */
    int exchangesInFlight() {
        int sum = 0;
        for (int i = 0; i < shards.shards(); i++) {
            sum += shards.inFlight(i);
        }
        return sum;
    }

    @Override
    public void close() {
        shards.close();
    }

    /** One exchange whose answer is read whole before anything is made of it. */
    private abstract static class WholeAnswerExchange<T> extends Exchange {
        final UniEmitter<? super T> em;

        WholeAnswerExchange(ConnectionShards shards, RequestOptions options, Buffer body, String what,
                UniEmitter<? super T> em) {
            super(shards, options, body, what);
            this.em = em;
        }

        /** The whole answer, whatever its status. */
        abstract void onAnswer(int status, Buffer answer);

        @Override
        final void onResponse(HttpClientResponse response) {
            response.body().onComplete(ar -> {
                if (ar.failed()) {
                    fail(ar.cause(), em::fail);
                    return;
                }
                onAnswer(response.statusCode(), ar.result());
            });
        }

        @Override
        final void onFailure(Throwable failure) {
            em.fail(failure);
        }
    }

    /** One streamed exchange: decodes SSE and forwards each event, watching for the end marker. */
    private static final class SseExchange<T> extends Exchange {
        private final MultiEmitter<? super T> em;
        private final SseEvents<T> events;
        private final SseDecoder decoder = new SseDecoder();

        SseExchange(ConnectionShards shards, RequestOptions options, Buffer body, String what, SseEvents<T> events,
                MultiEmitter<? super T> em) {
            super(shards, options, body, what);
            this.events = events;
            this.em = em;
        }

        @Override
        void onResponse(HttpClientResponse response) {
            if (response.statusCode() < 200 || response.statusCode() >= 300) {
                response.body().onComplete(ar -> succeed(() -> em.fail(HttpFailures.fromStatus(
                        response.statusCode(), ar.succeeded() ? ar.result().toString() : "", what))));
                return;
            }
            response.exceptionHandler(t -> fail(t, em::fail));
            response.handler(buffer -> onBytes(buffer));
            response.endHandler(v -> succeed(() -> em.fail(HttpFailures.streamCut(what))));
        }

        private void onBytes(Buffer buffer) {
            for (byte[] payload : decoder.feed(buffer.getBytes())) {
                if (finished()) {
                    return;
                }
                if (SseDecoder.isDone(payload)) {
                    succeed(em::complete);
                    return;
                }
                T event;
                try {
                    event = events.read(payload, what);
                } catch (IllegalArgumentException e) {
                    abandon(() -> em.fail(HttpFailures.badAnswer(what + " (stream event)", e)));
                    return;
                } catch (EngineException e) {
                    abandon(() -> em.fail(e));
                    return;
                }
                em.emit(event);
            }
        }

        @Override
        void onFailure(Throwable failure) {
            em.fail(failure);
        }
    }

    /**
     * The shared life of one exchange: connect, send, hand the response over, and on cancellation reset the request
     * so the engine sees the connection close. It remembers whether the request was sent and answered so failures
     * carry honest flags.
     */
    private abstract static class Exchange {
        private final ConnectionShards shards;
        private final RequestOptions options;
        private final Buffer body;
        final String what;
        private HttpClientRequest request;
        private boolean sent;
        private boolean answered;
        private boolean done;

        private int shard = -1;

        Exchange(ConnectionShards shards, RequestOptions options, Buffer body, String what) {
            this.shards = shards;
            this.options = options;
            this.body = body;
            this.what = what;
        }

        abstract void onResponse(HttpClientResponse response);

        abstract void onFailure(Throwable failure);

        final void start(Consumer<Runnable> onTermination) {
            onTermination.accept(this::terminated);
            int taken = shards.acquire();
            boolean cancelledAlready;
            synchronized (this) {
                cancelledAlready = done;
                if (!cancelledAlready) {
                    shard = taken;
                }
            }
            if (cancelledAlready) {
                shards.release(taken);
                return;
            }
            shards.execute(taken, () -> request(taken));
        }

        /** On the event loop of the shard's lane (see {@link ConnectionShards}). */
        private void request(int taken) {
            if (finished()) {
                return; // cancelled before its loop ran it: its place went back with the cancellation
            }
            shards.client(taken).request(options).onComplete(ar -> {
                if (ar.failed()) {
                    fail(ar.cause(), this::onFailure);
                    return;
                }
                HttpClientRequest r;
                synchronized (this) {
                    r = ar.result();
                    request = r;
                    if (done) {
                        r.reset(); // cancelled while connecting
                        return;
                    }
                    sent = true;
                }
                (body == null ? r.send() : r.send(body)).onComplete(resp -> {
                    if (resp.failed()) {
                        fail(resp.cause(), this::onFailure);
                        return;
                    }
                    synchronized (this) {
                        answered = true;
                    }
                    onResponse(resp.result());
                });
            });
        }

        /** Subscription ended (completed, failed or cancelled): an exchange still open is reset. */
        private void terminated() {
            HttpClientRequest r;
            boolean wasDone;
            int taken;
            synchronized (this) {
                wasDone = done;
                done = true;
                r = request;
                taken = shard;
                shard = -1;
            }
            if (!wasDone && r != null) {
                r.reset();
            }
            if (taken >= 0) {
                shards.release(taken);
            }
        }

        synchronized boolean finished() {
            return done;
        }

        /** Ends the exchange normally; the first terminal signal wins. */
        final void succeed(Runnable signal) {
            synchronized (this) {
                if (done) {
                    return;
                }
                done = true;
            }
            signal.run();
        }

        /** Ends the exchange with a failure and closes the connection, since the rest of the answer is unwanted. */
        final void abandon(Runnable signal) {
            HttpClientRequest r;
            synchronized (this) {
                if (done) {
                    return;
                }
                done = true;
                r = request;
            }
            if (r != null) {
                r.reset();
            }
            signal.run();
        }

        final void fail(Throwable failure, Consumer<Throwable> signal) {
            boolean wasSent;
            boolean wasAnswered;
            synchronized (this) {
                if (done) {
                    return;
                }
                done = true;
                wasSent = sent;
                wasAnswered = answered;
            }
            signal.accept(HttpFailures.fromTransport(failure, wasSent, wasAnswered, what));
        }
    }
}
