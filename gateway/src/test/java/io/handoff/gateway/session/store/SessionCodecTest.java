package io.handoff.gateway.session.store;

import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.CleanupObligation.Status;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * An obligation's {@code o:<id>} field: the JSON the scripts read ({@code status}, {@code heldUntil} in epoch
 * milliseconds), the same text earlier gateways wrote, and read back whole.
 */
class SessionCodecTest {

    private static final Instant HELD_UNTIL = Instant.ofEpochMilli(1_796_656_552_123L);

    @Test
    void anObligationIsWrittenAsEarlierGatewaysWroteIt() {
        CleanupObligation held = new CleanupObligation("o1", "vllm", "prefill-0", "kv-blocks",
                Map.of("request_id", "cmpl-1"), HELD_UNTIL, true, Status.ENGINE_HELD, 2, "engine said \"busy\"");
        assertEquals("{\"id\":\"o1\",\"connector\":\"vllm\",\"endpoint\":\"prefill-0\",\"resource\":\"kv-blocks\","
                + "\"handle\":{\"request_id\":\"cmpl-1\"},\"heldUntil\":1796656552123,\"pull\":true,"
                + "\"status\":\"ENGINE_HELD\",\"attempts\":2,\"lastError\":\"engine said \\\"busy\\\"\"}",
                SessionCodec.encodeObligation(held));

        CleanupObligation pending = CleanupObligation.pending("o2", "sglang", "decode-1", "bootstrap-room",
                Map.of(), null, false);
        assertEquals("{\"id\":\"o2\",\"connector\":\"sglang\",\"endpoint\":\"decode-1\",\"resource\":\"bootstrap-room\","
                + "\"handle\":{},\"heldUntil\":null,\"pull\":false,\"status\":\"PENDING\",\"attempts\":0,"
                + "\"lastError\":null}", SessionCodec.encodeObligation(pending));
    }

    @Test
    void whatIsWrittenIsReadBackWhole() {
        for (CleanupObligation o : new CleanupObligation[] {
                new CleanupObligation("o1", "trtllm", "ctx-0", "ctx-params", Map.of("request_id", "7",
                        "disagg", "{\"a\":1}"), HELD_UNTIL, false, Status.ABANDONED, 5, "timed out"),
                CleanupObligation.pending("o2", "vllm", "prefill-0", "kv-blocks", Map.of("request_id", "r"), null,
                        true)}) {
            assertEquals(o, SessionCodec.decodeObligation(SessionCodec.encodeObligation(o)));
        }
    }

    @Test
    void membersItDoesNotKnowAreSkippedAndHandleValuesOfOtherTypesKeepTheirText() {
        CleanupObligation read = SessionCodec.decodeObligation("{\"later\":{\"x\":[1,{\"y\":2}]},\"id\":\"o3\","
                + "\"status\":\"DISCHARGED\",\"handle\":{\"port\":5557,\"pulled\":true,\"ids\":[1,2]},"
                + "\"heldUntil\":1796656552123,\"attempts\":1,\"pull\":true,\"connector\":\"sglang\"}");
        assertEquals(new CleanupObligation("o3", "sglang", null, null, Map.of("port", "5557", "pulled", "true",
                "ids", "[1,2]"), HELD_UNTIL, true, Status.DISCHARGED, 1, null), read);
    }

    @Test
    void aFieldThatIsNoObligationIsRefused() {
        assertThrows(IllegalStateException.class, () -> SessionCodec.decodeObligation("[1]"));
        assertThrows(IllegalStateException.class, () -> SessionCodec.decodeObligation("{\"id\":\"o4\"}"));
        assertThrows(IllegalStateException.class, () -> SessionCodec.decodeObligation("{\"id\":"));
    }
}
