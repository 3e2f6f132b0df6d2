package io.handoff.gateway.orchestration;

import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The requests running on this replica, by tenant and request id: a second Generate with the same id is refused
 * here at once, and Control.Abort finds the run to stop. Duplicates on other replicas are caught by the session
 * store (the request id is the session's idempotency key).
 *
 * <p>A run whose client stream completed before its session's end was written ({@link #endingAfterStream}) no
 * longer holds its id: the client may reuse it at once, and the new request here waits for that end before it
 * allocates, as the store would refuse the key while the old session is live. Until the end lands the run still
 * counts in {@link #size()}, so a drain or a stopping replica waits for it.
 */
@ApplicationScoped
public class LiveRequests {

    private final Map<Key, RequestHandle> runs = new ConcurrentHashMap<>();
    /** Runs whose client stream completed and whose session's end is still being written. */
    private final Map<Key, CompletableFuture<Void>> endsInFlight = new ConcurrentHashMap<>();

    record Key(String tenant, String requestId) {
    }

    /**
     * A request from the moment its id is claimed: the run arrives once the session is allocated, and an abort
     * that comes before it is applied when it arrives.
     */
    static final class RequestHandle implements RunningRequest {
        private final String tenant;
        private final String requestId;
        private RunningRequest run;
        private String pendingAbort;
        private volatile CompletableFuture<Void> previousEnd;

        RequestHandle(String tenant, String requestId) {
            this.tenant = tenant;
            this.requestId = requestId;
        }

        synchronized RunningRequest run() {
            return run;
        }

        /**
         * {@code next}, once the end of an earlier run with this id, whose client stream already completed, is
         * written: at once when there is none.
         */
        <T> Uni<T> afterPreviousEnd(Supplier<Uni<T>> next) {
            CompletableFuture<Void> end = previousEnd;
            return end == null || end.isDone() ? next.get()
                    : Uni.createFrom().completionStage(end).chain(x -> next.get());
        }

        synchronized void attach(RunningRequest started) {
            run = started;
            if (pendingAbort != null) {
                started.abort(pendingAbort);
            }
        }

        @Override
        public String requestId() {
            return requestId;
        }

        @Override
        public String tenant() {
            return tenant;
        }

        @Override
        public synchronized void abort(String reason) {
            if (run != null) {
                run.abort(reason);
            } else {
                pendingAbort = reason;
            }
        }
    }

    /** Claims a request id for the tenant; empty when the tenant already runs a request with this id here. */
    Optional<RequestHandle> claim(String tenant, String requestId) {
        RequestHandle handle = new RequestHandle(tenant, requestId);
        Key key = new Key(tenant, requestId);
        if (runs.putIfAbsent(key, handle) != null) {
            return Optional.empty();
        }
        // read after the claim: a run hands its id over by entering endsInFlight before it leaves runs
        handle.previousEnd = endsInFlight.get(key);
        return Optional.of(handle);
    }

    /**
     * The run's client stream completed and its session's end, {@code end}, is still to be written: the id is free,
     * and the run counts as running until {@code end} terminates. Subscribes to {@code end}.
     */
    void endingAfterStream(String tenant, String requestId, RequestHandle run, Uni<Void> end) {
        Key key = new Key(tenant, requestId);
        CompletableFuture<Void> landed = new CompletableFuture<>();
        endsInFlight.put(key, landed);
        runs.remove(key, run);
        end.subscribe().with(x -> landed(key, landed), f -> landed(key, landed));
    }

    private void landed(Key key, CompletableFuture<Void> landed) {
        endsInFlight.remove(key, landed);
        landed.complete(null);
    }

    void unregister(String tenant, String requestId, RequestHandle run) {
        runs.remove(new Key(tenant, requestId), run);
    }

    /** The runs with this request id: of one tenant, or of every tenant when {@code tenant} is null (admin). */
    public List<RunningRequest> find(String tenant, String requestId) {
        return runs.entrySet().stream()
                .filter(e -> e.getKey().requestId().equals(requestId)
                        && (tenant == null || e.getKey().tenant().equals(tenant)))
                .<RunningRequest>map(Map.Entry::getValue).toList();
    }

    /** The running requests of this replica whose KV session is {@code sessionId} (at most one). */
    public List<RunningRequest> bySession(String sessionId) {
        return runs.values().stream().map(RequestHandle::run)
                .filter(r -> r instanceof HandoffRun h && h.sessionId().equals(sessionId)).toList();
    }

    public List<RunningRequest> all(String tenant) {
        return runs.entrySet().stream().filter(e -> tenant == null || e.getKey().tenant().equals(tenant))
                .<RunningRequest>map(Map.Entry::getValue).toList();
    }

    /** The runs of this replica, with those whose session's end is still being written. */
    public int size() {
        return runs.size() + endsInFlight.size();
    }
}
