package io.handoff.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** Test client: plain JSON calls, SSE streams and raw sockets (to abort by closing the connection). */
public final class SimHttp {
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();

    private SimHttp() {
    }

    /** A response: status and parsed JSON body (null if empty or not JSON). */
    public static final class Resp {
        public final int status;
        public final String raw;
        public final JsonNode json;

        Resp(int status, String raw) {
            this.status = status;
            this.raw = raw;
            JsonNode j = null;
            try {
                j = raw.isEmpty() ? null : Http.parse(raw);
            } catch (IllegalArgumentException ignored) {
                // not JSON (metrics)
            }
            this.json = j;
        }
    }

    public static Resp get(String url) {
        return send(HttpRequest.newBuilder(URI.create(url)).GET().timeout(Duration.ofSeconds(20)).build());
    }

    public static Resp post(String url, Object body) {
        return post(url, body, Map.of());
    }

    public static Resp post(String url, Object body, Map<String, String> headers) {
        return send(request(url, body, headers));
    }

    public static CompletableFuture<Resp> postAsync(String url, Object body) {
        return CLIENT.sendAsync(request(url, body, Map.of()), HttpResponse.BodyHandlers.ofString())
            .thenApply(r -> new Resp(r.statusCode(), r.body()));
    }

    private static HttpRequest request(String url, Object body, Map<String, String> headers) {
        String s = body instanceof String ? (String) body : Http.write(Http.JSON.valueToTree(body));
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
            .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(s));
        headers.forEach(b::header);
        return b.build();
    }

    private static Resp send(HttpRequest req) {
        try {
            HttpResponse<String> r = CLIENT.send(req, HttpResponse.BodyHandlers.ofString());
            return new Resp(r.statusCode(), r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A consumed SSE stream. */
    public static final class Stream {
        public final int status;
        public final List<JsonNode> events = new ArrayList<>();
        public boolean done;
        public IOException error;

        Stream(int status) {
            this.status = status;
        }

        /** Concatenated completion text or chat delta content of choice 0. */
        public String text() {
            StringBuilder sb = new StringBuilder();
            for (JsonNode e : events) {
                JsonNode c = e.path("choices").path(0);
                if (c.has("text")) {
                    sb.append(c.get("text").asText());
                } else if (c.path("delta").has("content")) {
                    sb.append(c.path("delta").get("content").asText());
                }
            }
            return sb.toString();
        }

        public String finishReason() {
            for (JsonNode e : events) {
                JsonNode f = e.path("choices").path(0).path("finish_reason");
                if (!f.isMissingNode() && !f.isNull()) {
                    return f.asText();
                }
            }
            return null;
        }

        public JsonNode last() {
            return events.get(events.size() - 1);
        }
    }

    public static Stream stream(String url, Object body) {
        return stream(url, body, Map.of());
    }

    public static Stream stream(String url, Object body, Map<String, String> headers) {
        try {
            HttpResponse<InputStream> r = CLIENT.send(request(url, body, headers),
                HttpResponse.BodyHandlers.ofInputStream());
            Stream s = new Stream(r.statusCode());
            try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (!line.startsWith("data: ")) {
                        continue;
                    }
                    String data = line.substring(6);
                    if ("[DONE]".equals(data)) {
                        s.done = true;
                    } else {
                        s.events.add(Http.parse(data));
                    }
                }
            } catch (IOException e) {
                s.error = e;
            }
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A raw HTTP/1.1 request on its own socket, so that a test can close the connection (= client abort). */
    public static final class Raw implements AutoCloseable {
        private final Socket socket;

        private Raw(Socket socket) {
            this.socket = socket;
        }

        public static Raw post(int port, String path, Object body) {
            return post(port, path, body, Map.of());
        }

        public static Raw post(int port, String path, Object body, Map<String, String> headers) {
            try {
                Socket s = new Socket("127.0.0.1", port);
                s.setSoTimeout(20_000);
                byte[] b = (body instanceof String ? (String) body : Http.write(Http.JSON.valueToTree(body)))
                    .getBytes(StandardCharsets.UTF_8);
                StringBuilder h = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + b.length + "\r\n");
                headers.forEach((k, v) -> h.append(k).append(": ").append(v).append("\r\n"));
                h.append("\r\n");
                OutputStream out = s.getOutputStream();
                out.write(h.toString().getBytes(StandardCharsets.UTF_8));
                out.write(b);
                out.flush();
                return new Raw(s);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Reads until the server closes or {@code marker} was seen; returns what arrived. */
        public String readUntil(String marker) {
            StringBuilder sb = new StringBuilder();
            byte[] buf = new byte[8192];
            try {
                InputStream in = socket.getInputStream();
                int n;
                while ((n = in.read(buf)) > 0) {
                    sb.append(new String(buf, 0, n, StandardCharsets.UTF_8));
                    if (marker != null && sb.indexOf(marker) >= 0) {
                        break;
                    }
                }
            } catch (IOException e) {
                sb.append("\n<io error: ").append(e.getMessage()).append('>');
            }
            return sb.toString();
        }

        @Override
        public void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing is the point
            }
        }
    }
}
