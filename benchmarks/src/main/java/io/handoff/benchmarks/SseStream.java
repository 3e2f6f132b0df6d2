package io.handoff.benchmarks;

import io.vertx.core.buffer.Buffer;

import java.nio.charset.StandardCharsets;

/**
 * Reads an OpenAI {@code text_completion} event stream as it arrives and checks it: counts the chunks that carry
 * token text, notes a {@code "finish_reason":"length"}, an error event and {@code data: [DONE]}. The direct run and
 * the gateway's HTTP front are read by this same code, so the client does the same work in both.
 *
 * <p>It scans the text instead of parsing each chunk as JSON on purpose: the driver shares the two cores with what it
 * measures, and a JSON parse of every one of 64 chunks per request would take CPU from the engines and the gateway.
 * The scan is exact for what the simulator and the gateway write (one {@code "text"} per chunk, ASCII token text).
 */
final class SseStream {

    private static final String DATA = "data: ";
    private static final String TEXT = "\"text\":\"";

    private final StringBuilder pending = new StringBuilder();
    private int tokens;
    private boolean finishedLength;
    private boolean done;
    private String error;

    /**
     * Takes the next bytes of the body; answers true when they brought the first token chunk. Read as ISO-8859-1,
     * which never fails on a multi-byte character cut between two buffers; the markers looked for are ASCII.
     */
    boolean feed(Buffer bytes) {
        pending.append(bytes.toString(StandardCharsets.ISO_8859_1));
        boolean first = false;
        int end;
        // the simulator and the gateway both end every event with a blank line, "\n\n"
        while ((end = pending.indexOf("\n\n")) >= 0) {
            String event = pending.substring(0, end);
            pending.delete(0, end + 2);
            first |= event(event);
        }
        return first;
    }

    private boolean event(String event) {
        for (String line : event.split("\n")) {
            if (!line.startsWith(DATA)) {
                continue;
            }
            String payload = line.substring(DATA.length()).trim();
            if (payload.equals("[DONE]")) {
                done = true;
                continue;
            }
            if (payload.contains("\"error\":")) {
                if (error == null) {
                    error = payload.length() > 300 ? payload.substring(0, 300) + "..." : payload;
                }
                continue;
            }
            if (payload.contains("\"finish_reason\":\"length\"")) {
                finishedLength = true;
            }
            int text = payload.indexOf(TEXT);
            if (text >= 0 && text + TEXT.length() < payload.length() && payload.charAt(text + TEXT.length()) != '"') {
                tokens++;
                if (tokens == 1) {
                    return true;
                }
            }
        }
        return false;
    }

    int tokens() {
        return tokens;
    }

    /** Null when the stream was whole: [DONE], no error event, {@code expected} token chunks, finish "length". */
    String problem(int expected) {
        if (error != null) {
            return "error event: " + error;
        }
        if (!done) {
            return "the stream ended without data: [DONE] after " + tokens + " token chunks";
        }
        if (tokens != expected) {
            return tokens + " token chunks, expected " + expected;
        }
        if (!finishedLength) {
            return "no chunk with finish_reason \"length\"";
        }
        return null;
    }
}
