package io.handoff.connector.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.connector.openai.http.Json;
import io.handoff.simulator.trtllm.DisaggAuth;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The x-trtllm-disagg-auth header: Python's HMAC over the sorted, compact JSON, and the simulator's check. */
class TrtllmAuthTest {

    private static final String KEY = "secret-key";

    /** Values computed with Python's hmac and json.dumps(sort_keys=True, separators=(",", ":")). */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"encoded_opaque_state\":\"AAECAwQF\",\"ctx_info_endpoint\":null,\"first_gen_tokens\":[1]}"
            + "|sha256=2c2a583b64012c7bd74e690d7df9862900e7b0bc2b430b0fea141026ee73e079",
        "{\"ctx_info_endpoint\":[\"tcp://10.0.0.5:38671\"],\"schedule_style\":1}"
            + "|sha256=6b439d2261348bef5ec07069a0c3537733d30699c397f929b72e69a3ffc95439",
        "{\"ctx_info_endpoint\":\"tcp://h:1\",\"encoded_opaque_state\":\"st\u00e9\"}"
            + "|sha256=8f6e7ed16f2fd2de2645da0ca78cf4b36c54770b8c20806d7920d67e129ba9e6"})
    void knownAnswers(String params, String expected) {
        assertEquals(expected, DisaggAuthHeader.value(KEY, Json.parse(params)));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"encoded_opaque_state\":\"AAECAwQF\"}",
        "{\"ctx_info_endpoint\":[\"tcp://10.0.0.5:38671\"]}",
        "{\"ctx_info_endpoint\":\"tcp://a\\\"b\\\\c:1\",\"encoded_opaque_state\":\"x/y+z==\"}"})
    void agreesWithTheSimulatorsCheck(String params) {
        JsonNode dp = Json.parse(params);
        assertEquals(DisaggAuth.sign(KEY, dp), DisaggAuthHeader.value(KEY, dp));
    }

    @Test
    void onlyProtectedFieldsNeedIt() {
        assertFalse(DisaggAuthHeader.needed(Json.parse("{\"request_type\":\"context_only\",\"disagg_request_id\":5}")));
        assertFalse(DisaggAuthHeader.needed(Json.parse("{\"ctx_info_endpoint\":null,\"encoded_opaque_state\":null}")));
        assertTrue(DisaggAuthHeader.needed(Json.parse("{\"encoded_opaque_state\":\"a\"}")));
        assertTrue(DisaggAuthHeader.needed(Json.parse("{\"ctx_info_endpoint\":\"tcp://h:1\"}")));
    }
}
