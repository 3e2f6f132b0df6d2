package io.handoff.connector.openai.http;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Incremental Server-Sent Events decoder: feed it the bytes of a stream in whatever chunks the network delivers,
 * get back the {@code data} payload of each complete event. Lines may end with LF, CRLF or CR; several
 * {@code data:} lines of one event are joined with LF; comments ({@code :...}) and other fields are skipped, as the
 * SSE specification says. Not thread-safe: one decoder per stream.
 */
public final class SseDecoder {

    /** The payload OpenAI-compatible servers send as the last event of a stream. */
    public static final String DONE = "[DONE]";

    private final StringBuilder line = new StringBuilder();
    private final StringBuilder data = new StringBuilder();
    private boolean hasData;
    private boolean lastWasCr;
    // bytes of a UTF-8 character split across network chunks wait here
    private byte[] pending = new byte[0];

    /** Decodes the next chunk of the stream and returns the payloads of the events it completed. */
    public List<String> feed(byte[] bytes) {
        List<String> events = new ArrayList<>();
        String text = decodeUtf8(bytes);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\n' && lastWasCr) {
                lastWasCr = false;
                continue;
            }
            lastWasCr = c == '\r';
            if (c == '\n' || c == '\r') {
                endLine(events);
            } else {
                line.append(c);
            }
        }
        return events;
    }

    /** Whether bytes of an unfinished event are buffered (a stream that ends here was cut mid-event). */
    public boolean hasPartialEvent() {
        return line.length() > 0 || hasData || pending.length > 0;
    }

    private void endLine(List<String> events) {
        if (line.length() == 0) {
            if (hasData) {
                events.add(data.toString());
            }
            data.setLength(0);
            hasData = false;
            return;
        }
        String l = line.toString();
        line.setLength(0);
        if (l.startsWith(":")) {
            return;
        }
        int colon = l.indexOf(':');
        String field = colon < 0 ? l : l.substring(0, colon);
        if (!field.equals("data")) {
            return;
        }
        String value = colon < 0 ? "" : l.substring(colon + 1);
        if (value.startsWith(" ")) {
            value = value.substring(1);
        }
        if (hasData) {
            data.append('\n');
        }
        data.append(value);
        hasData = true;
    }

    private String decodeUtf8(byte[] bytes) {
        byte[] all = bytes;
        if (pending.length > 0) {
            all = new byte[pending.length + bytes.length];
            System.arraycopy(pending, 0, all, 0, pending.length);
            System.arraycopy(bytes, 0, all, pending.length, bytes.length);
        }
        int complete = completeUtf8Length(all);
        pending = Arrays.copyOfRange(all, complete, all.length);
        return new String(all, 0, complete, StandardCharsets.UTF_8);
    }

    /** Length of the prefix that does not end inside a multi-byte UTF-8 character. */
    private static int completeUtf8Length(byte[] b) {
        int n = b.length;
        for (int back = 1; back <= Math.min(3, n); back++) {
            int v = b[n - back] & 0xFF;
            if ((v & 0xC0) == 0x80) {
                continue; // continuation byte: look further back for the lead byte
            }
            int need = v >= 0xF0 ? 4 : v >= 0xE0 ? 3 : v >= 0xC0 ? 2 : 1;
            return need > back ? n - back : n;
        }
        return n;
    }
}
