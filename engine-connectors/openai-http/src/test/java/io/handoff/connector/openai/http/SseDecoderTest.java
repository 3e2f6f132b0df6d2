package io.handoff.connector.openai.http;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SseDecoderTest {

    @Test
    void eventsSplitAnywhereAreJoined() {
        String stream = "data: {\"a\":1}\n\n: keep-alive comment\n\ndata: {\"b\":\"é\"}\r\n\r\ndata: [DONE]\n\n";
        byte[] bytes = stream.getBytes(StandardCharsets.UTF_8);
        for (int split = 1; split < bytes.length; split++) {
            SseDecoder decoder = new SseDecoder();
            List<String> events = new ArrayList<>(text(decoder.feed(Arrays.copyOfRange(bytes, 0, split))));
            events.addAll(text(decoder.feed(Arrays.copyOfRange(bytes, split, bytes.length))));
            assertEquals(List.of("{\"a\":1}", "{\"b\":\"é\"}", "[DONE]"), events, "split at " + split);
            assertFalse(decoder.hasPartialEvent());
        }
    }

    @Test
    void multiLineDataAndOtherFields() {
        SseDecoder decoder = new SseDecoder();
        List<String> events = text(decoder.feed("event: x\nid: 7\ndata: one\ndata:two\n\n"
                .getBytes(StandardCharsets.UTF_8)));
        assertEquals(List.of("one\ntwo"), events);
    }

    @Test
    void unfinishedEventIsReported() {
        SseDecoder decoder = new SseDecoder();
        assertEquals(List.of(), decoder.feed("data: {\"a\"".getBytes(StandardCharsets.UTF_8)));
        assertTrue(decoder.hasPartialEvent());
    }

    @Test
    void crAloneAndCrLfEndLinesAlikeEvenSplitBetweenChunks() {
        SseDecoder decoder = new SseDecoder();
        List<String> events = new ArrayList<>(text(decoder.feed("data: a\r".getBytes(StandardCharsets.UTF_8))));
        events.addAll(text(decoder.feed("\n\r\ndata: b\r\rdata: c\n\n".getBytes(StandardCharsets.UTF_8))));
        assertEquals(List.of("a", "b", "c"), events);
    }

    @Test
    void theEndMarkerIsKnownWhateverWhitespaceSurroundsIt() {
        assertTrue(SseDecoder.isDone("[DONE]".getBytes(StandardCharsets.UTF_8)));
        assertTrue(SseDecoder.isDone(" [DONE] ".getBytes(StandardCharsets.UTF_8)));
        assertFalse(SseDecoder.isDone("[DONE]x".getBytes(StandardCharsets.UTF_8)));
        assertFalse(SseDecoder.isDone("{\"a\":1}".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void everyThreeWaySplitOfMixedEventsDecodesAlike() {
        String stream = "data: {\"a\":1}\n\nevent: x\ndata: one\r\ndata:two\r\n\r\n: note\rdata: é\r\rdata: [DONE]\n\n";
        byte[] bytes = stream.getBytes(StandardCharsets.UTF_8);
        List<String> expected = List.of("{\"a\":1}", "one\ntwo", "é", "[DONE]");
        for (int first = 0; first <= bytes.length; first++) {
            for (int second = first; second <= bytes.length; second++) {
                SseDecoder decoder = new SseDecoder();
                List<String> events = new ArrayList<>(text(decoder.feed(Arrays.copyOfRange(bytes, 0, first))));
                events.addAll(text(decoder.feed(Arrays.copyOfRange(bytes, first, second))));
                events.addAll(text(decoder.feed(Arrays.copyOfRange(bytes, second, bytes.length))));
                assertEquals(expected, events, "split at " + first + " and " + second);
                assertFalse(decoder.hasPartialEvent());
            }
        }
    }

    @Test
    void aChunkReusedByTheCallerAfterFeedingChangesNoEvent() {
        SseDecoder decoder = new SseDecoder();
        byte[] chunk = "data: abc\n".getBytes(StandardCharsets.UTF_8);
        assertEquals(List.of(), decoder.feed(chunk));
        Arrays.fill(chunk, (byte) 'x');
        byte[] whole = "data: def\n\n".getBytes(StandardCharsets.UTF_8);
        assertEquals(List.of("abc"), text(decoder.feed(new byte[] {'\n'})));
        List<byte[]> payloads = decoder.feed(whole);
        Arrays.fill(whole, (byte) 'y');
        assertEquals(List.of("def"), text(payloads));
    }

    @Test
    void manyEventsInOneChunkComeInOrder() {
        SseDecoder decoder = new SseDecoder();
        assertEquals(List.of("1", "2", "3"), text(decoder.feed("data: 1\n\ndata: 2\n\ndata: 3\n\n"
                .getBytes(StandardCharsets.UTF_8))));
        assertEquals(List.of("4"), text(decoder.feed("data: 4\n\n".getBytes(StandardCharsets.UTF_8))));
    }

    private static List<String> text(List<byte[]> payloads) {
        return payloads.stream().map(p -> new String(p, StandardCharsets.UTF_8)).toList();
    }
}
