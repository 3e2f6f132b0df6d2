package io.handoff.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.ext.web.RoutingContext;
import java.util.HashMap;
import java.util.Map;

/**
 * The producer side of a pairing between two engines that must meet (SGLang prefill and decode on one bootstrap
 * room; TensorRT-LLM generation-first context and generation on one disagg_request_id). The consumer engine holds a
 * long-poll open on the producer's auxiliary server; the producer answers it when the KV has been "written". A
 * consumer that goes away (abort, timeout, crash) closes the long poll and is forgotten. Event-loop confined.
 */
public final class Rendezvous {
    /** A consumer waiting on the producer, i.e. an open long-poll. */
    public static final class Waiter {
        private final RoutingContext rc;
        private final JsonNode request;

        Waiter(RoutingContext rc, JsonNode request) {
            this.rc = rc;
            this.request = request;
        }

        /** What the consumer sent when it registered. */
        public JsonNode request() {
            return request;
        }

        public boolean isOpen() {
            return !rc.response().closed() && !rc.response().ended();
        }

        /** Delivers the transfer result (or a failure) to the consumer. */
        public void respond(int status, JsonNode body) {
            Http.json(rc.response(), status, body);
        }
    }

    private final Map<String, Waiter> waiting = new HashMap<>();

    /** Registers a consumer; its disconnect unregisters it. Returns the waiter. */
    public Waiter register(String key, RoutingContext rc, JsonNode request) {
        Waiter w = new Waiter(rc, request);
        waiting.put(key, w);
        rc.response().closeHandler(v -> waiting.remove(key, w));
        return w;
    }

    /** Takes the consumer waiting on {@code key}, if it is still there. */
    public Waiter take(String key) {
        Waiter w = waiting.remove(key);
        return w != null && w.isOpen() ? w : null;
    }

    public int size() {
        return waiting.size();
    }

    public void clear() {
        waiting.clear();
    }
}
