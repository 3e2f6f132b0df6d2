package io.handoff.simulator;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.channel.ChannelOption;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.net.impl.ConnectionBase;

/** JSON and connection helpers shared by the engines. */
public final class Http {
    public static final ObjectMapper JSON = new ObjectMapper();

    private Http() {
    }

    public static ObjectNode obj() {
        return JSON.createObjectNode();
    }

    public static ArrayNode arr() {
        return JSON.createArrayNode();
    }

    public static String write(JsonNode n) {
        try {
            return JSON.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    public static JsonNode parse(String s) {
        try {
            return JSON.readTree(s);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("invalid JSON: " + e.getOriginalMessage());
        }
    }

    /** Sends a JSON body unless the response is already over. */
    public static void json(HttpServerResponse resp, int status, JsonNode body) {
        if (resp.ended() || resp.closed()) {
            return;
        }
        resp.setStatusCode(status).putHeader("content-type", "application/json").end(write(body));
    }

    public static void text(HttpServerResponse resp, int status, String contentType, String body) {
        if (resp.ended() || resp.closed()) {
            return;
        }
        resp.setStatusCode(status).putHeader("content-type", contentType).end(body);
    }

    /**
     * Drops the client's connection abruptly: a TCP reset where the transport allows it (SO_LINGER 0), otherwise a
     * plain close. Either way the client gets no (or no complete) response.
     */
    public static void reset(HttpServerRequest req) {
        HttpConnection conn = req.connection();
        if (conn instanceof ConnectionBase) {
            try {
                ((ConnectionBase) conn).channel().config().setOption(ChannelOption.SO_LINGER, 0);
            } catch (RuntimeException ignored) {
                // fall back to a normal close
            }
        }
        conn.close();
    }
}
