package io.handoff.benchmarks;

import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SseStreamTest {

    private static String chunk(String text, String finish) {
        return "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"" + text
                + "\",\"logprobs\":null,\"finish_reason\":" + (finish == null ? "null" : "\"" + finish + "\"")
                + "}]}\n\n";
    }

    @Test
    void aWholeStreamSplitAnywhere() {
        // the simulator's shape: finish_reason on the last token chunk, then a usage chunk with no choices
        String body = chunk(" w1", null) + chunk(" w2", null) + chunk(" w3", "length")
                + "data: {\"choices\":[],\"usage\":{\"completion_tokens\":3}}\n\n" + "data: [DONE]\n\n";
        for (int cut = 1; cut < body.length(); cut++) {
            SseStream s = new SseStream();
            boolean first = s.feed(Buffer.buffer(body.substring(0, cut)));
            boolean firstLater = s.feed(Buffer.buffer(body.substring(cut)));
            assertTrue(first ^ firstLater, "the first token is reported exactly once, cut at " + cut);
            assertEquals(3, s.tokens());
            assertNull(s.problem(3));
        }
    }

    @Test
    void theGatewaysFinishChunkCarriesNoToken() {
        SseStream s = new SseStream();
        s.feed(Buffer.buffer(chunk(" w1", null) + chunk(" w2", null) + chunk("", "length") + "data: [DONE]\n\n"));
        assertEquals(2, s.tokens());
        assertNull(s.problem(2));
        assertEquals("2 token chunks, expected 3", s.problem(3));
    }

    @Test
    void errorsCutsAndOtherEndingsAreProblems() {
        SseStream error = new SseStream();
        error.feed(Buffer.buffer(chunk(" w1", null) + "data: {\"error\":{\"message\":\"Internal server error\"}}\n\n"
                + "data: [DONE]\n\n"));
        assertTrue(error.problem(1).startsWith("error event: "));

        SseStream cut = new SseStream();
        assertTrue(cut.feed(Buffer.buffer(chunk(" w1", null))));
        assertEquals("the stream ended without data: [DONE] after 1 token chunks", cut.problem(1));

        SseStream stopped = new SseStream();
        assertFalse(stopped.feed(Buffer.buffer(chunk("", "stop") + "data: [DONE]\n\n")));
        assertEquals("0 token chunks, expected 1", stopped.problem(1));

        SseStream noFinish = new SseStream();
        noFinish.feed(Buffer.buffer(chunk(" w1", null) + "data: [DONE]\n\n"));
        assertEquals("no chunk with finish_reason \"length\"", noFinish.problem(1));
    }
}
