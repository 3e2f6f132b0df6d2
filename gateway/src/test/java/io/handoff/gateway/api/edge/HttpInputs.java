package io.handoff.gateway.api.edge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.gateway.api.edge.JsonFaults.Faulty;
import io.handoff.gateway.api.edge.JsonFaults.Field;
import io.handoff.gateway.api.edge.JsonFaults.Shape;

import java.math.BigDecimal;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.handoff.gateway.api.edge.JsonFaults.NODES;
import static io.handoff.gateway.api.edge.JsonFaults.bytes;
import static io.handoff.gateway.api.edge.JsonFaults.notBoolean;
import static io.handoff.gateway.api.edge.JsonFaults.notFiniteNumber;
import static io.handoff.gateway.api.edge.JsonFaults.notInteger;
import static io.handoff.gateway.api.edge.JsonFaults.notText;

/**
 * Bad requests for the HTTP fronts: {@code /v1/completions}, {@code /v1/chat/completions} and the REST mirror
 * {@code /v1/kv-sessions}. A request is bad in its body (a {@link JsonFaults} fault), in its headers (no key, a key
 * that may not do this, a credential or id given twice, an id too long) or, on a session path, in its id.
 */
final class HttpInputs {

    static final String MODEL = "m-vllm";
    private static final long UINT32_MAX = 0xFFFF_FFFFL;

    private final String key;
    private final String otherTenantKey;
    private final String adminKey;
    private final String foreignSessionId;

    /** @param foreignSessionId a live session of the tenant of {@code otherTenantKey} */
    HttpInputs(String key, String otherTenantKey, String adminKey, String foreignSessionId) {
        this.key = key;
        this.otherTenantKey = otherTenantKey;
        this.adminKey = adminKey;
        this.foreignSessionId = foreignSessionId;
    }

    BadInput.Http next(Dice dice) {
        return switch (dice.between(0, 9)) {
            case 0, 1, 2 -> completion(dice, false);
            case 3, 4, 5 -> completion(dice, true);
            case 6, 7 -> allocate(dice);
            default -> onSession(dice);
        };
    }

    // ---------------------------------------------------------------- the OpenAI front

    private BadInput.Http completion(Dice dice, boolean chat) {
        String path = chat ? "/v1/chat/completions" : "/v1/completions";
        Shape shape = chat ? chatShape(dice) : completionShape(dice);
        if (dice.chance(0.2)) {
            List<Map.Entry<String, String>> headers = new ArrayList<>(json());
            String kind = dice.pick("no-key", "unknown-key", "admin-key", "repeated-authorization",
                    "repeated-x-api-key", "repeated-request-id", "long-request-id");
            switch (kind) {
                case "no-key" -> {
                }
                case "unknown-key" -> headers.add(bearer("fz-" + dice.hex(dice.between(0, 100))));
                case "admin-key" -> headers.add(bearer(adminKey));
                case "repeated-authorization" -> {
                    headers.add(bearer(key));
                    headers.add(bearer(otherTenantKey));
                }
                case "repeated-x-api-key" -> {
                    headers.add(Map.entry("x-api-key", key));
                    headers.add(Map.entry("x-api-key", otherTenantKey));
                }
                case "repeated-request-id" -> {
                    headers.add(bearer(key));
                    headers.add(Map.entry("X-Request-Id", "fz-" + dice.hex(8)));
                    headers.add(Map.entry("X-Request-Id", "fz-" + dice.hex(8)));
                }
                default -> {
                    headers.add(bearer(key));
                    headers.add(Map.entry("X-Request-Id", dice.hex(dice.between(257, 6000))));
                }
            }
            return new BadInput.Http("POST", path, headers, bytes(shape.valid()), "http.header." + kind);
        }
        Faulty body = JsonFaults.spoil(dice, shape);
        return new BadInput.Http("POST", path, withKey(), body.body(), body.kind());
    }

    private static Shape completionShape(Dice dice) {
        ObjectNode valid = NODES.objectNode().put("model", MODEL).put("prompt", "fuzz").put("max_tokens", 4);
        List<Field> fields = List.of(
                new Field("model", notText()),
                new Field("prompt", List.of(NODES.numberNode(7), NODES.booleanNode(true), NODES.objectNode(),
                        NODES.arrayNode(), NODES.arrayNode().add(-1), NODES.arrayNode().add(1).add("x"),
                        NODES.arrayNode().add(UINT32_MAX + 1), NODES.arrayNode().add("a").add("b"),
                        NODES.arrayNode().add(1.5), NODES.arrayNode().add(NODES.objectNode()))),
                new Field("max_tokens", notInteger(1, UINT32_MAX)),
                new Field("min_tokens", notInteger(0, UINT32_MAX)),
                new Field("n", notInteger(1, Integer.MAX_VALUE)),
                new Field("top_k", notInteger(Integer.MIN_VALUE, Integer.MAX_VALUE)),
                new Field("seed", notInteger(Long.MIN_VALUE, Long.MAX_VALUE)),
                new Field("logprobs", notInteger(0, UINT32_MAX)),
                new Field("temperature", notFiniteNumber()),
                new Field("top_p", notFiniteNumber()),
                new Field("presence_penalty", notFiniteNumber()),
                new Field("frequency_penalty", notFiniteNumber()),
                new Field("stream", notBoolean()),
                new Field("ignore_eos", notBoolean()),
                new Field("stop", List.of(NODES.numberNode(1), NODES.objectNode(), NODES.arrayNode().add(1),
                        NODES.arrayNode().add("a").add(NODES.nullNode()))),
                new Field("stop_token_ids", List.of(NODES.textNode("1"), NODES.arrayNode().add(-1),
                        NODES.arrayNode().add("1"), NODES.arrayNode().add(UINT32_MAX * 4))),
                new Field("echo", List.of(NODES.booleanNode(true), NODES.textNode("no"))),
                new Field("suffix", List.of(NODES.textNode("s"), NODES.numberNode(1))),
                new Field("best_of", List.of(NODES.numberNode(3), NODES.textNode("1"))));
        return new Shape(valid, fields, List.of("model", "prompt"), "model", openAiExtras(dice, valid));
    }

    private static Shape chatShape(Dice dice) {
        ObjectNode valid = NODES.objectNode().put("model", MODEL);
        valid.putArray("messages").addObject().put("role", "user").put("content", "fuzz");
        valid.put("max_tokens", 4);
        List<Field> fields = List.of(
                new Field("model", notText()),
                new Field("messages", List.of(NODES.textNode("hi"), NODES.numberNode(1), NODES.arrayNode(),
                        NODES.objectNode(), NODES.arrayNode().add(1), NODES.arrayNode().add(NODES.objectNode()),
                        NODES.arrayNode().add(NODES.objectNode().put("role", 1).put("content", "x")))),
                new Field("max_tokens", notInteger(1, UINT32_MAX)),
                new Field("max_completion_tokens", notInteger(1, UINT32_MAX)),
                new Field("n", notInteger(1, Integer.MAX_VALUE)),
                new Field("seed", notInteger(Long.MIN_VALUE, Long.MAX_VALUE)),
                new Field("top_logprobs", List.of(NODES.numberNode(2), NODES.textNode("2"))),
                new Field("logprobs", notBoolean()),
                new Field("temperature", notFiniteNumber()),
                new Field("repetition_penalty", notFiniteNumber()),
                new Field("stream", notBoolean()),
                new Field("stop", List.of(NODES.numberNode(1), NODES.arrayNode().add(true))));
        return new Shape(valid, fields, List.of("model", "messages"), "model", openAiExtras(dice, valid));
    }

    /** Faults of the OpenAI bodies beyond types: native handoff fields, options that need others, odd models. */
    private static List<Faulty> openAiExtras(Dice dice, ObjectNode valid) {
        ObjectNode nativeField = valid.deepCopy();
        nativeField.set(dice.pick("kv_transfer_params", "bootstrap_host", "bootstrap_port", "bootstrap_room",
                "disaggregated_params", "disagg_request_id"), dice.pick(NODES.objectNode(), NODES.textNode("x"),
                NODES.numberNode(1)));
        ObjectNode streamOptions = valid.deepCopy();
        streamOptions.putObject("stream_options").put("include_usage", true);
        ObjectNode unknownModel = valid.deepCopy().put("model", "fz-" + dice.text(dice.between(0, 300)));
        String digits = new String(bytes(valid.deepCopy().put("temperature", "@T@")), StandardCharsets.UTF_8)
                .replace("\"@T@\"", JsonFaults.tooManyDigits(dice));
        return List.of(new Faulty("json.native-handoff-field", bytes(nativeField)),
                new Faulty("json.option-without-its-switch", bytes(streamOptions)),
                new Faulty("json.unknown-model", bytes(unknownModel)),
                new Faulty("json.extreme-number", digits.getBytes(StandardCharsets.UTF_8)));
    }

    // ---------------------------------------------------------------- the REST mirror

    private BadInput.Http allocate(Dice dice) {
        ObjectNode valid = NODES.objectNode().put("request_id", "fz-" + dice.hex(12)).put("model", MODEL);
        List<Field> fields = List.of(
                new Field("request_id", notText()),
                new Field("model", notText()),
                new Field("schedule_style", List.of(NODES.textNode(""), NODES.textNode("CONTEXT-FIRST"),
                        NODES.textNode("context_first"), NODES.textNode("unspecified"),
                        NODES.textNode("KV_SCHEDULE_STYLE_CONTEXT_FIRST"), NODES.numberNode(1),
                        NODES.textNode(dice.text(dice.between(1, 40))))),
                new Field("transfer_disposition", List.of(NODES.textNode("BYPASS"), NODES.textNode("none"),
                        NODES.numberNode(2), NODES.textNode(dice.text(dice.between(1, 40))))),
                new Field("lease_ms", List.of(NODES.numberNode(-1), NODES.numberNode(0),
                        NODES.numberNode(Long.MAX_VALUE), NODES.numberNode(Long.MIN_VALUE), NODES.numberNode(1.5),
                        NODES.textNode("1000"), NODES.numberNode(new BigDecimal("1e400")),
                        NODES.numberNode(1000L * 60 * 60 * 24 * 365))),
                new Field("attributes", List.of(NODES.textNode("x"), NODES.arrayNode(), NODES.numberNode(1),
                        bigAttributes(dice), deepAttributes(dice))));
        ObjectNode unknownField = valid.deepCopy().put("lease", 1000);
        Shape shape = new Shape(valid, fields, List.of("request_id", "model"), "request_id",
                List.of(new Faulty("json.unknown-field", bytes(unknownField))));
        if (dice.chance(0.25)) {
            List<Map.Entry<String, String>> headers = new ArrayList<>();
            String kind = dice.pick("no-key", "unknown-key", "admin-key", "repeated-authorization",
                    "repeated-idempotency-key", "no-idempotency-key", "long-idempotency-key", "wrong-content-type");
            headers.add(Map.entry("Content-Type", kind.equals("wrong-content-type")
                    ? dice.pick("text/plain", "application/xml", "application/x-www-form-urlencoded")
                    : "application/json"));
            switch (kind) {
                case "no-key" -> headers.add(idempotencyKey(dice));
                case "unknown-key" -> {
                    headers.add(bearer("fz-" + dice.hex(16)));
                    headers.add(idempotencyKey(dice));
                }
                case "admin-key" -> {
                    headers.add(bearer(adminKey));
                    headers.add(idempotencyKey(dice));
                }
                case "repeated-authorization" -> {
                    headers.add(bearer(key));
                    headers.add(bearer(otherTenantKey));
                    headers.add(idempotencyKey(dice));
                }
                case "repeated-idempotency-key" -> {
                    headers.add(bearer(key));
                    headers.add(idempotencyKey(dice));
                    headers.add(idempotencyKey(dice));
                }
                case "no-idempotency-key" -> headers.add(bearer(key));
                case "long-idempotency-key" -> {
                    headers.add(bearer(key));
                    headers.add(Map.entry("Idempotency-Key", dice.hex(dice.between(257, 6000))));
                }
                default -> {
                    headers.add(bearer(key));
                    headers.add(idempotencyKey(dice));
                }
            }
            return new BadInput.Http("POST", "/v1/kv-sessions", headers, bytes(valid), "http.header." + kind);
        }
        Faulty body = JsonFaults.spoil(dice, shape);
        List<Map.Entry<String, String>> headers = new ArrayList<>(withKey());
        headers.add(idempotencyKey(dice));
        return new BadInput.Http("POST", "/v1/kv-sessions", headers, body.body(), body.kind());
    }

    /** A session path (get, renew, release) whose id is not a session of the caller's: nothing to find. */
    private BadInput.Http onSession(Dice dice) {
        String kind = dice.pick("unknown", "malformed", "another-tenants", "long", "encoded", "empty");
        String id = switch (kind) {
            case "unknown" -> dice.hex(32);
            case "malformed" -> dice.pick("not-a-session-id", dice.hex(31), dice.hex(33), dice.hex(32).toUpperCase(),
                    "..", "%2e%2e", dice.text(dice.between(1, 40)));
            case "another-tenants" -> foreignSessionId;
            case "long" -> dice.hex(dice.between(257, 4000));
            case "encoded" -> dice.pick("%00", "%ff%fe", "%2F..%2F", "a%0d%0aX-Injected:%201", "%c0%af");
            default -> "";
        };
        String encoded = kind.equals("encoded") ? id : URLEncoder.encode(id, StandardCharsets.UTF_8)
                .replace("+", "%20");
        String op = dice.pick("get", "renew", "release");
        String path = "/v1/kv-sessions/" + encoded + (op.equals("get") ? "" : "/" + op);
        if (kind.equals("empty") && op.equals("get")) {
            path = "/v1/kv-sessions/%20";
        }
        String method = op.equals("get") ? "GET" : "POST";
        byte[] body = new byte[0];
        String fault = "http.session-id." + kind;
        if (!op.equals("get") && dice.chance(0.5)) {
            ObjectNode valid = op.equals("renew") ? NODES.objectNode().put("lease_ms", 10_000).put("expected_epoch", 1)
                    : NODES.objectNode().put("reason", "fuzz").put("expected_epoch", 1);
            List<Field> fields = op.equals("renew")
                    ? List.of(new Field("lease_ms", List.of(NODES.numberNode(-5), NODES.textNode("5"))),
                            new Field("expected_epoch", notInteger(0, Long.MAX_VALUE)))
                    : List.of(new Field("reason", notText()),
                            new Field("expected_epoch", notInteger(0, Long.MAX_VALUE)));
            Faulty spoiled = JsonFaults.spoil(dice, new Shape(valid, fields, List.of("expected_epoch"),
                    op.equals("renew") ? "lease_ms" : "reason", List.of()));
            body = spoiled.body();
            fault = spoiled.kind();
        }
        List<Map.Entry<String, String>> headers = new ArrayList<>(withKey());
        if (dice.chance(0.1)) {
            headers = new ArrayList<>(json());
            headers.add(bearer(dice.pick(adminKey, "fz-" + dice.hex(8))));
            fault = "http.header.admin-or-unknown-key";
        }
        return new BadInput.Http(method, path, headers, body, fault);
    }

    private static JsonNode bigAttributes(Dice dice) {
        ObjectNode big = NODES.objectNode();
        int n = dice.between(70, 400);
        for (int i = 0; i < n; i++) {
            big.put("k" + i, dice.huge(1000));
        }
        return big;
    }

    /** Attributes nested deeper than a protobuf Struct may be (100 levels), well within what JSON parsers read. */
    private static JsonNode deepAttributes(Dice dice) {
        ObjectNode top = NODES.objectNode();
        ObjectNode at = top;
        int depth = dice.between(101, 900);
        for (int i = 0; i < depth; i++) {
            at = at.putObject("a");
        }
        return top;
    }

    // ---------------------------------------------------------------- headers

    private static List<Map.Entry<String, String>> json() {
        return List.of(Map.entry("Content-Type", "application/json"));
    }

    private List<Map.Entry<String, String>> withKey() {
        return List.of(Map.entry("Content-Type", "application/json"), bearer(key));
    }

    private static Map.Entry<String, String> bearer(String key) {
        return Map.entry("Authorization", "Bearer " + key);
    }

    private static Map.Entry<String, String> idempotencyKey(Dice dice) {
        return Map.entry("Idempotency-Key", "fz-" + dice.hex(16));
    }
}
