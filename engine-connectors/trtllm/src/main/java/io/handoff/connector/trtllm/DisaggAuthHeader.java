package io.handoff.connector.trtllm;

import com.fasterxml.jackson.databind.JsonNode;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;

/**
 * The {@code x-trtllm-disagg-auth} header of newer workers: {@code "sha256=" + hex(HMAC-SHA256(key, payload))}, where
 * payload is Python's {@code json.dumps({"ctx_info_endpoint": e, "encoded_opaque_state": s}, sort_keys=True,
 * separators=(",", ":"))} with {@code e} the endpoint string (the first element if a list) or null, {@code s} the
 * opaque state or null. Needed on any request whose disaggregated_params carry either field.
 */
final class DisaggAuthHeader {

    static final String NAME = "x-trtllm-disagg-auth";

    private DisaggAuthHeader() {
    }

    static boolean needed(JsonNode params) {
        return present(params.get("encoded_opaque_state")) || present(params.get("ctx_info_endpoint"));
    }

    static String value(String key, JsonNode params) {
        JsonNode endpoint = params.get("ctx_info_endpoint");
        if (endpoint != null && endpoint.isArray()) {
            endpoint = endpoint.size() == 0 ? null : endpoint.get(0);
        }
        String payload = "{\"ctx_info_endpoint\":" + pythonJson(endpoint) + ",\"encoded_opaque_state\":"
                + pythonJson(params.get("encoded_opaque_state")) + "}";
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return "sha256=" + HexFormat.of().formatHex(mac.doFinal(payload.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    private static boolean present(JsonNode v) {
        return v != null && !v.isNull();
    }

    /** A string or null as Python's json.dumps writes it (ensure_ascii: non-ASCII as \\uXXXX, UTF-16 units). */
    static String pythonJson(JsonNode v) {
        if (!present(v)) {
            return "null";
        }
        String s = v.asText();
        StringBuilder out = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
