package io.handoff.gateway.api.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.gateway.orchestration.GenerateOrchestrator;
import io.handoff.gateway.api.rest.HttpStatuses;
import io.handoff.gateway.orchestration.GenerateRefusal;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.tenancy.ApiKeys;
import io.handoff.gateway.tenancy.Caller;
import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code POST /v1/completions}, {@code POST /v1/chat/completions} and {@code GET /v1/models} on the gateway's HTTP
 * port. Written on the Vert.x router
 * rather than as a REST resource so that the server-sent events are framed exactly as the engines frame them
 * ({@code data: <json>\n\n}, then {@code data: [DONE]}), one event written before the next is requested (the
 * client's pace is the stream's pace), and a client that goes away cancels the request as a gRPC cancel does.
 */
@ApplicationScoped
public class OpenAiRoutes {

    private static final Logger LOG = Logger.getLogger(OpenAiRoutes.class);

    private static final int MAX_BODY_BYTES = 8 * 1024 * 1024;

    private final GenerateOrchestrator orchestrator;
    private final RouteRegistry routes;
    private final ApiKeys keys;
    private final Clock clock;

    public OpenAiRoutes(GenerateOrchestrator orchestrator, RouteRegistry routes, ApiKeys keys, Clock clock) {
        this.orchestrator = orchestrator;
        this.routes = routes;
        this.keys = keys;
        this.clock = clock;
    }

    void register(@Observes Router router) {
        router.post("/v1/completions").handler(BodyHandler.create().setBodyLimit(MAX_BODY_BYTES))
                .handler(ctx -> completions(ctx, false));
        router.post("/v1/chat/completions").handler(BodyHandler.create().setBodyLimit(MAX_BODY_BYTES))
                .handler(ctx -> completions(ctx, true));
        router.get("/v1/models").handler(this::models);
    }

    private void models(RoutingContext ctx) {
        if (caller(ctx).isEmpty()) {
            return;
        }
        ObjectNode body = OpenAiJson.object().put("object", "list");
        ArrayNode data = body.putArray("data");
        for (Route route : routes.all()) {
            for (String name : route.settings().modelNames()) {
                data.addObject().put("id", name).put("object", "model").put("created", 0)
                        .put("owned_by", "handoff").put("root", route.settings().engineModel())
                        .put("route", route.name());
            }
        }
        json(ctx, 200, body);
    }

    /** A completion or, with {@code chat}, a chat completion: the same orchestration, different JSON. */
    private void completions(RoutingContext ctx, boolean chat) {
        Optional<Caller> caller = caller(ctx);
        if (caller.isEmpty()) {
            return;
        }
        CompletionRequests.Parsed parsed;
        try {
            JsonNode body = OpenAiJson.parse(ctx.body().buffer() == null ? new byte[0] : ctx.body().buffer().getBytes());
            List<String> given = ctx.request().headers().getAll("X-Request-Id");
            if (given.size() > 1) {
                throw OpenAiFailure.invalid(null, "X-Request-Id is repeated; a request has one id");
            }
            String requestId = given.stream().filter(s -> !s.isBlank()).findFirst()
                    .orElseGet(() -> (chat ? "chatcmpl-" : "cmpl-") + UUID.randomUUID().toString().replace("-", ""));
            parsed = chat ? CompletionRequests.parseChat(body, requestId) : CompletionRequests.parse(body, requestId);
        } catch (OpenAiFailure f) {
            fail(ctx, f);
            return;
        } catch (RuntimeException malformed) {
            fail(ctx, OpenAiFailure.invalid(null, "the body is not valid JSON: " + malformed.getMessage()));
            return;
        }
        long created = clock.instant().getEpochSecond();
        Answers answers = chat ? new ChatAnswers(parsed.request().getRequestId(), created, parsed.model(),
                parsed.logprobs()) : new CompletionAnswers(parsed.request().getRequestId(), created, parsed.model(),
                parsed.logprobs());
        var events = orchestrator.generate(caller.get().tenant(), parsed.request());
        if (parsed.stream()) {
            events.subscribe().withSubscriber(new SseWriter(ctx, answers, parsed.includeUsage()));
        } else {
            List<GenerateResponse> all = new ArrayList<>();
            var subscription = new AtomicReference<Cancellable>();
            ctx.response().closeHandler(v -> Optional.ofNullable(subscription.get()).ifPresent(c -> c.cancel()));
            subscription.set(events.subscribe().with(all::add, failure -> fail(ctx, failure),
                    () -> answer(ctx, answers, all, parsed.outputs())));
        }
    }

    private void answer(RoutingContext ctx, Answers answers, List<GenerateResponse> events, int outputs) {
        Optional<GenerateResponse> error = events.stream().filter(GenerateResponse::hasError).findFirst();
        if (error.isPresent()) {
            var e = error.get().getError();
            fail(ctx, OpenAiFailure.of(e.getCode(), e.getMessage()));
            return;
        }
        json(ctx, 200, answers.body(events, outputs));
    }

    /**
     * Writes the events as server-sent events. Events that arrive in one turn of the event loop (an engine's network
     * read often carries several tokens) go out in one write; the next batch is asked for only once that write was
     * handed to the connection, so a slow client slows the stream instead of filling memory. Headers go out with the
     * first write, so a refusal before acceptance is still an HTTP status.
     */
    private static final class SseWriter implements Flow.Subscriber<GenerateResponse> {
        /** Events asked for at once: enough for the tokens of one engine read, few enough to bound the buffer. */
        private static final int BATCH = 32;

        private final RoutingContext ctx;
        private final Answers answers;
        private final boolean includeUsage;
        private Flow.Subscription subscription;
        private boolean started;
        /**
         * Frames waiting for the next write, and how many events they came from. Guarded by this: the events of one
         * stream may come from more than one thread (the legs' connections).
         */
        private Buffer pending;
        private int pendingEvents;
        private boolean flushScheduled;

        SseWriter(RoutingContext ctx, Answers answers, boolean includeUsage) {
            this.ctx = ctx;
            this.answers = answers;
            this.includeUsage = includeUsage;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            ctx.response().closeHandler(v -> s.cancel());
            s.request(BATCH);
        }

        @Override
        public synchronized void onNext(GenerateResponse event) {
            if (ctx.response().closed()) {
                subscription.cancel();
                return;
            }
            if (pending == null) {
                pending = Buffer.buffer(256);
            }
            pendingEvents++;
            if (event.hasError()) {
                var e = event.getError();
                SseFrames.append(pending, OpenAiJson.bytes(OpenAiFailure.body(e.getMessage(), "engine_error",
                        e.getCode().name(), null)));
            }
            answers.frames(event, includeUsage, pending);
            if (!flushScheduled) {
                flushScheduled = true;
                ctx.vertx().runOnContext(v -> flush());
            }
        }

        /** Writes what the events of this turn made, then asks for as many events as it wrote. */
        private synchronized void flush() {
            flushScheduled = false;
            int events = pendingEvents;
            Buffer frames = pending;
            pending = null;
            pendingEvents = 0;
            if (events == 0 || frames == null) {
                return;
            }
            HttpServerResponse response = ctx.response();
            if (response.closed()) {
                subscription.cancel();
                return;
            }
            if (frames.length() == 0) {
                subscription.request(events);
                return;
            }
            start();
            response.write(frames).onComplete(done -> {
                if (done.succeeded()) {
                    subscription.request(events);
                } else {
                    subscription.cancel();
                }
            });
        }

        @Override
        public synchronized void onError(Throwable failure) {
            pendingEvents = 0;
            if (!started && pending == null) {
                fail(ctx, failure);
            } else if (!ctx.response().closed()) {
                Buffer last = pending == null ? Buffer.buffer() : pending;
                pending = null;
                SseFrames.append(last, OpenAiJson.bytes(asFailure(failure).body()));
                SseFrames.done(last);
                start();
                ctx.response().end(last);
            }
        }

        @Override
        public synchronized void onComplete() {
            pendingEvents = 0;
            if (ctx.response().closed()) {
                return;
            }
            Buffer last = pending == null ? Buffer.buffer() : pending;
            pending = null;
            SseFrames.done(last);
            start();
            ctx.response().end(last);
        }

        private void start() {
            if (!started) {
                started = true;
                ctx.response().setStatusCode(200).setChunked(true)
                        .putHeader("Content-Type", "text/event-stream; charset=utf-8")
                        .putHeader("Cache-Control", "no-cache");
            }
        }
    }

    private Optional<Caller> caller(RoutingContext ctx) {
        Optional<Caller> caller = keys.resolve(ApiKeys.presentedKey(ctx.request().headers().getAll("Authorization"),
                ctx.request().headers().getAll("x-api-key")));
        if (caller.isEmpty()) {
            fail(ctx, new OpenAiFailure(401, "authentication_error", null, null, ApiKeys.KEY_REQUIRED));
            return Optional.empty();
        }
        if (caller.get().admin()) {
            fail(ctx, new OpenAiFailure(403, "permission_error", null, null,
                    "admin keys manage the deployment; completions run as a tenant"));
            return Optional.empty();
        }
        return caller;
    }

    private static void fail(RoutingContext ctx, Throwable failure) {
        OpenAiFailure f = asFailure(failure);
        if (failure instanceof GenerateRefusal r && r.retryAfter().isPresent() && !ctx.response().ended()) {
            ctx.response().putHeader(HttpHeaders.RETRY_AFTER, HttpStatuses.retryAfterSeconds(r.retryAfter().get()));
        }
        json(ctx, f.status(), f.body());
    }

    /**
     * A failure as the error it answers. One nobody foresaw is logged whole and answered without its words, which
     * may name internals.
     */
    private static OpenAiFailure asFailure(Throwable failure) {
        if (failure instanceof OpenAiFailure known) {
            return known;
        }
        if (failure instanceof GenerateRefusal refusal) {
            return OpenAiFailure.of(refusal);
        }
        LOG.error("OpenAI request failed unexpectedly", failure);
        return new OpenAiFailure(500, OpenAiFailure.typeOf(500), "ERROR_CODE_INTERNAL", null, "internal error");
    }

    private static void json(RoutingContext ctx, int status, JsonNode body) {
        if (ctx.response().ended() || ctx.response().closed()) {
            return;
        }
        ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json")
                .end(OpenAiJson.write(body));
    }
}
