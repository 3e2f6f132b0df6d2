package io.handoff.gateway.testing;

import io.grpc.Channel;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.InferenceGrpc;
import org.awaitility.Awaitility;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One Generate over real gRPC, as a framework makes it: the events as they arrive, and a client-side cancel at any
 * moment (what a client does when its user goes away).
 */
public final class StreamingGenerate {

    public static final Duration WAIT = Duration.ofSeconds(30);

    private final GenerateRequest request;
    private final List<GenerateResponse> events = new CopyOnWriteArrayList<>();
    private final CompletableFuture<Void> end = new CompletableFuture<>();
    private final CompletableFuture<ClientCallStreamObserver<GenerateRequest>> call = new CompletableFuture<>();

    private StreamingGenerate(GenerateRequest request) {
        this.request = request;
    }

    public static StreamingGenerate start(Channel channel, GenerateRequest request) {
        StreamingGenerate c = new StreamingGenerate(request);
        InferenceGrpc.newStub(channel).generate(request, new ClientResponseObserver<GenerateRequest,
                GenerateResponse>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<GenerateRequest> requestStream) {
                c.call.complete(requestStream);
            }

            @Override
            public void onNext(GenerateResponse value) {
                c.events.add(value);
            }

            @Override
            public void onError(Throwable t) {
                c.end.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                c.end.complete(null);
            }
        });
        return c;
    }

    /** Runs a Generate to its end and returns its events; a refusal is thrown as the gRPC status. */
    public static List<GenerateResponse> run(Channel channel, GenerateRequest request) {
        return start(channel, request).awaitEnd();
    }

    public GenerateRequest request() {
        return request;
    }

    /** The events received so far. */
    public List<GenerateResponse> events() {
        return List.copyOf(events);
    }

    public long tokensReceived() {
        return events.stream().filter(GenerateResponse::hasToken).count();
    }

    public void awaitTokens(int n) {
        Awaitility.await("" + n + " tokens of " + request.getRequestId()).atMost(WAIT)
                .pollInterval(Duration.ofMillis(2))
                .until(() -> tokensReceived() >= n || end.isDone());
        if (tokensReceived() < n) {
            throw new AssertionError("the call ended after " + tokensReceived() + " tokens: " + events);
        }
    }

    /** Cancels the call from the client side, as a client that goes away does. */
    public void cancel() {
        try {
            call.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).cancel("the client went away", null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError(e);
        }
    }

    public boolean ended() {
        return end.isDone();
    }

    /** Waits for the end of the stream and returns every event; a non-OK status is thrown as it came. */
    public List<GenerateResponse> awaitEnd() {
        try {
            end.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            return events();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof StatusRuntimeException status) {
                throw status;
            }
            throw new AssertionError(e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("Generate " + request.getRequestId() + " did not end; events so far: " + events);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Waits for the call to end with a non-OK status and returns it. */
    public StatusRuntimeException awaitStatus() {
        try {
            awaitEnd();
        } catch (StatusRuntimeException status) {
            return status;
        }
        throw new AssertionError("Generate " + request.getRequestId() + " ended OK: " + events);
    }
}
