package io.handoff.chaos;

import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.StoppingOptions;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code openengine.v1.Inference/Generate} over gRPC: an orchestrated Generate in a given style, or one leg of a
 * participant. A client may give up after {@code cancelAfterEvents} events (a cancel) or at its deadline.
 */
final class GenerateCalls {

    /**
     * How a stream ended, as the client saw it, the PrefillReady ref of a participant's prefill leg, and the last
     * GenerationFinished's reason and message (empty when none came).
     */
    record Result(String outcome, int events, KvSessionRef prefillReady, String finish) {
    }

    private final History history;

    GenerateCalls(History history) {
        this.history = history;
    }

    static GenerateRequest request(String requestId, String model, int tokens, KvScheduleStyle style) {
        GenerateRequest.Builder b = GenerateRequest.newBuilder().setRequestId(requestId).setModel(model)
                .setPrompt("chaos " + requestId + " keeps every handoff honest [[eos:" + tokens + "]]")
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(tokens + 4));
        if (style != null) {
            b.setKv(KvOptions.newBuilder().setScheduleStyle(style));
        }
        return b.build();
    }

    static GenerateRequest decodeLeg(GenerateRequest base, KvSessionRef ref) {
        return base.toBuilder().setKv(KvOptions.newBuilder().setSession(ref)).build();
    }

    /**
     * Runs one Generate. {@code leg} is null for an orchestrated one, else {@code prefill} or {@code decode}
     * (participant mode; {@code session} names a prefill leg's session).
     */
    Result generate(Replicas.Target t, GenerateRequest req, String kind, String leg, String session,
            int cancelAfterEvents, long deadlineMs) {
        return generate(t, req, kind, leg, session, cancelAfterEvents, deadlineMs, () -> {
        });
    }

    /** As above; {@code onFirstEvent} runs when the stream's first event arrives (the call was admitted). */
    Result generate(Replicas.Target t, GenerateRequest req, String kind, String leg, String session,
            int cancelAfterEvents, long deadlineMs, Runnable onFirstEvent) {
        long start = history.now();
        InferenceGrpc.InferenceBlockingStub stub = InferenceGrpc.newBlockingStub(t.channel())
                .withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS);
        if (leg != null) {
            Metadata md = new Metadata();
            md.put(Metadata.Key.of("handoff-leg", Metadata.ASCII_STRING_MARSHALLER), leg);
            if (session != null) {
                md.put(Metadata.Key.of("handoff-kv-session", Metadata.ASCII_STRING_MARSHALLER), session);
            }
            stub = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
        }
        InferenceGrpc.InferenceBlockingStub call = stub;
        Context.CancellableContext ctx = Context.current().withCancellation();
        AtomicReference<Result> result = new AtomicReference<>();
        try {
            ctx.run(() -> {
                int events = 0;
                KvSessionRef ready = null;
                String finish = "";
                String outcome = "ended-without-finish";
                try {
                    Iterator<GenerateResponse> it = call.generate(req);
                    while (it.hasNext()) {
                        GenerateResponse r = it.next();
                        if (events++ == 0) {
                            onFirstEvent.run();
                        }
                        if (r.hasPrefillReady()) {
                            ready = r.getPrefillReady().getKvSession();
                            outcome = "prefill-ready";
                        } else if (r.hasError()) {
                            outcome = "engine-error:" + r.getError().getCode().name();
                        } else if (r.hasFinished()) {
                            outcome = "finished";
                            finish = r.getFinished().getReason().name() + " " + r.getFinished().getMessage();
                        }
                        if (cancelAfterEvents > 0 && events >= cancelAfterEvents) {
                            ctx.cancel(null);
                            outcome = "client-cancelled";
                            break;
                        }
                    }
                } catch (StatusRuntimeException e) {
                    outcome = events > 0 && outcome.equals("client-cancelled") ? outcome
                            : "status:" + KvCalls.code(e);
                    history.op(kind, t.replicaId(), start, req.getRequestId(), session, outcome, KvCalls.message(e));
                    result.set(new Result(outcome, events, ready, finish));
                    return;
                }
                history.op(kind, t.replicaId(), start, req.getRequestId(), session, outcome, events + " events");
                result.set(new Result(outcome, events, ready, finish));
            });
        } finally {
            ctx.cancel(null);
        }
        return result.get();
    }
}
