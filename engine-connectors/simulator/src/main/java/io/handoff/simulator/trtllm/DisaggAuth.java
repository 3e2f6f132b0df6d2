package io.handoff.simulator.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The {@code x-trtllm-disagg-auth} header: {@code "sha256=" + hex(HMAC_SHA256(key, payload))} where payload is the
 * compact, key-sorted JSON {@code {"ctx_info_endpoint":<str|first of list|null>,"encoded_opaque_state":<str|null>}}.
 * Required when a request's disaggregated_params carry encoded_opaque_state or ctx_info_endpoint.
 */
public final class DisaggAuth {
    public static final String HEADER = "x-trtllm-disagg-auth";

    private DisaggAuth() {
    }

    /** Whether these params carry fields the header protects. */
    public static boolean protectedFields(JsonNode dp) {
        return dp != null && (present(dp.get("encoded_opaque_state")) || present(dp.get("ctx_info_endpoint")));
    }

    /** The header value a caller must send for these params. */
    public static String sign(String key, JsonNode dp) {
        JsonNode ep = dp.get("ctx_info_endpoint");
        if (ep != null && ep.isArray()) {
            ep = ep.size() > 0 ? ep.get(0) : null;
        }
        JsonNode st = dp.get("encoded_opaque_state");
        String payload = "{\"ctx_info_endpoint\":" + jsonString(ep) + ",\"encoded_opaque_state\":" + jsonString(st)
            + "}";
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            byte[] h = mac.doFinal(payload.getBytes(StandardCharsets.UTF_8));
            StringBuilder sb = new StringBuilder("sha256=");
            for (byte b : h) {
                sb.append(String.format("%02x", b));
            }
            return sb.toString();
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException(e);
        }
    }

    static boolean verify(String key, JsonNode dp, String provided) {
        if (provided == null) {
            return false;
        }
        return MessageDigest.isEqual(sign(key, dp).getBytes(StandardCharsets.UTF_8),
            provided.getBytes(StandardCharsets.UTF_8));
    }

    private static boolean present(JsonNode v) {
        return v != null && !v.isNull();
    }

    /** Python json.dumps of a str or None (ASCII-escaped like ensure_ascii=True). */
    private static String jsonString(JsonNode v) {
        if (v == null || v.isNull()) {
            return "null";
        }
        String s = v.asText();
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"':
                    sb.append("\\\"");
                    break;
                case '\\':
                    sb.append("\\\\");
                    break;
                case '\n':
                    sb.append("\\n");
                    break;
                case '\r':
                    sb.append("\\r");
                    break;
                case '\t':
                    sb.append("\\t");
                    break;
                default:
                    if (c < 0x20 || c > 0x7e) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        return sb.append('"').toString();
    }
}
