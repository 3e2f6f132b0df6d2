package io.handoff.gateway.api.edge;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** One generated bad input: the front it is sent to, the kind of fault it carries, and its bytes. */
sealed interface BadInput {

    /** Where it goes: an HTTP method and path, or a gRPC method's full name. */
    String front();

    /** The fault it carries, for the tally (e.g. {@code json.truncated}, {@code proto.invalid-utf8}). */
    String kind();

    /** Enough of it to see what was sent when it is reported (long values are cut). */
    String shown();

    /** An HTTP request: headers in order (a name may repeat), the body as bytes on the wire. */
    record Http(String method, String path, List<Map.Entry<String, String>> headers, byte[] body, String kind)
            implements BadInput {

        @Override
        public String front() {
            return method + " " + Shown.cut(path.replaceAll("/v1/kv-sessions/.+", "/v1/kv-sessions/{id}"), 60);
        }

        @Override
        public String shown() {
            return method + " " + Shown.cut(path, 200) + " " + Shown.headers(headers) + " body "
                    + Shown.bytes(body);
        }
    }

    /** A gRPC call: metadata in order (a key may repeat), the one request message as raw bytes. */
    record Grpc(String fullMethod, boolean streaming, List<Map.Entry<String, String>> metadata, byte[] message,
            String kind) implements BadInput {

        @Override
        public String front() {
            return fullMethod;
        }

        @Override
        public String shown() {
            return fullMethod + " " + Shown.headers(metadata) + " message " + Shown.bytes(message);
        }
    }

    /** How inputs are shown in a report. */
    final class Shown {
        private Shown() {
        }

        static String cut(String s, int max) {
            return s.length() <= max ? s : s.substring(0, max) + "...(" + s.length() + " chars)";
        }

        static String headers(List<Map.Entry<String, String>> headers) {
            return headers.stream().map(h -> h.getKey() + ": " + cut(h.getValue(), 80))
                    .collect(Collectors.joining(", ", "[", "]"));
        }

        static String bytes(byte[] b) {
            return b.length + " bytes " + cut(new String(b, StandardCharsets.ISO_8859_1)
                    .replaceAll("[^\\x20-\\x7e]", "."), 300);
        }
    }
}
