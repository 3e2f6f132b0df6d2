package io.handoff.gateway.orchestration;

import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The requests running on this replica, by tenant and request id: a second Generate with the same id is refused
 * here at once, and Control.Abort finds the run to stop. Duplicates on other replicas are caught by the session
 * store (the request id is the session's idempotency key).
 */
@ApplicationScoped
public class LiveRequests {

    private final Map<Key, RequestHandle> runs = new ConcurrentHashMap<>();

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

        RequestHandle(String tenant, String requestId) {
            this.tenant = tenant;
            this.requestId = requestId;
        }

        synchronized RunningRequest run() {
            return run;
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
        return runs.putIfAbsent(new Key(tenant, requestId), handle) == null ? Optional.of(handle)
                : Optional.empty();
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

    public int size() {
        return runs.size();
    }
}
