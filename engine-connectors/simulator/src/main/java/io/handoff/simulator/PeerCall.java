package io.handoff.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;

/**
 * One engine-to-engine call (a NIXL side-channel read, an SGLang bootstrap rendezvous, a TRT-LLM transceiver
 * exchange), over plain HTTP between simulators. It may be a long poll; {@link #cancel()} resets it, which the other
 * side sees as a closed connection.
 */
public final class PeerCall {
    /** Status and JSON body of the peer's answer. */
    public static final class Answer {
        public final int status;
        public final JsonNode body;

        Answer(int status, JsonNode body) {
            this.status = status;
            this.body = body;
        }
    }

    private final Promise<Answer> result = Promise.promise();
    private volatile HttpClientRequest request;
    private volatile boolean cancelled;

    private PeerCall() {
    }

    public static PeerCall post(HttpClient client, String host, int port, String path, JsonNode body) {
        PeerCall call = new PeerCall();
        RequestOptions opts = new RequestOptions().setMethod(HttpMethod.POST).setHost(host).setPort(port)
            .setURI(path).putHeader("content-type", "application/json");
        client.request(opts).onComplete(ar -> {
            if (ar.failed()) {
                call.result.tryFail(ar.cause());
                return;
            }
            HttpClientRequest req = ar.result();
            call.request = req;
            if (call.cancelled) {
                req.reset();
                call.result.tryFail("cancelled");
                return;
            }
            req.send(Buffer.buffer(Http.write(body))).compose(resp -> resp.body().map(b -> {
                JsonNode json = b.length() == 0 ? Http.obj() : Http.parse(b.toString());
                return new Answer(resp.statusCode(), json);
            })).onComplete(r -> {
                if (r.succeeded()) {
                    call.result.tryComplete(r.result());
                } else {
                    call.result.tryFail(r.cause());
                }
            });
        });
        return call;
    }

    public Future<Answer> result() {
        return result.future();
    }

    /** Abandons the call: the connection is reset so the peer sees the close. */
    public void cancel() {
        cancelled = true;
        HttpClientRequest r = request;
        if (r != null) {
            r.reset();
        }
        result.tryFail("cancelled");
    }
}
