package io.handoff.simulator;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;

/**
 * Writes {@code data: <json>\n\n} events and the final {@code data: [DONE]\n\n}. Applies the stream-cut fault: after
 * K events the connection is closed mid-body and nothing more is written (not even {@code [DONE]}).
 */
public final class SseWriter {
    private final HttpServerRequest req;
    private final HttpServerResponse resp;
    private final int cutAfter;
    private final Runnable onCut;
    private int sent;
    private boolean cut;

    private final Vertx vertx;

    public SseWriter(Vertx vertx, HttpServerRequest req, int cutAfter, Runnable onCut) {
        this.vertx = vertx;
        this.req = req;
        this.resp = req.response();
        this.cutAfter = cutAfter;
        this.onCut = onCut;
    }

    /** Sends the 200 and the event-stream headers (engines commit the status before generating). */
    public void open() {
        if (resp.headWritten() || resp.closed()) {
            return;
        }
        resp.setStatusCode(200)
            .setChunked(true)
            .putHeader("content-type", "text/event-stream; charset=utf-8")
            .putHeader("cache-control", "no-cache");
        resp.write("");
    }

    public boolean isOpen() {
        return !cut && !resp.closed() && !resp.ended();
    }

    /** Writes one event; returns false when the stream is over (closed by the client, or cut). */
    public boolean event(String json) {
        if (!isOpen()) {
            return false;
        }
        if (cutAfter >= 0 && sent >= cutAfter) {
            doCut();
            return false;
        }
        resp.write("data: " + json + "\n\n");
        sent++;
        return true;
    }

    /** Writes {@code [DONE]} and ends the response. */
    public void done() {
        if (!isOpen()) {
            return;
        }
        if (cutAfter >= 0 && sent >= cutAfter) {
            doCut();
            return;
        }
        resp.end("data: [DONE]\n\n");
    }

    public int sent() {
        return sent;
    }

    private void doCut() {
        cut = true;
        onCut.run();
        // what was written is delivered first; then the connection drops without the terminating chunk
        vertx.setTimer(50, t -> Http.reset(req));
    }
}
