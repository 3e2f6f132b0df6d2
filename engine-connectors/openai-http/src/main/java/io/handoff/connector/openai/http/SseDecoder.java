package io.handoff.connector.openai.http;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Incremental Server-Sent Events decoder: feed it the bytes of a stream in whatever chunks the network delivers,
 * get back the {@code data} payload of each complete event, as UTF-8 bytes ready for a JSON parser. Lines may end
 * with LF, CRLF or CR; several {@code data:} lines of one event are joined with LF; comments ({@code :...}) and other
 * fields are skipped, as the SSE specification says. It works on bytes throughout: the line breaks and the field
 * names are ASCII, so a multi-byte character split across network chunks is simply carried over, never decoded
 * here. Not thread-safe: one decoder per stream.
 */
public final class SseDecoder {

    /** The payload OpenAI-compatible servers send as the last event of a stream. */
    public static final String DONE = "[DONE]";

    private static final byte[] DATA = "data".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DONE_BYTES = DONE.getBytes(StandardCharsets.US_ASCII);

    private byte[] line = new byte[256];
    private int lineLength;
    private byte[] data = new byte[256];
    private int dataLength;
    private boolean hasData;
    private boolean lastWasCr;

    /** Decodes the next chunk of the stream and returns the payloads of the events it completed. */
    public List<byte[]> feed(byte[] bytes) {
        List<byte[]> events = new ArrayList<>(2);
        int start = 0;
        for (int i = 0; i < bytes.length; i++) {
            byte b = bytes[i];
            if (b != '\n' && b != '\r') {
                continue;
            }
            boolean crlfTail = b == '\n' && lastWasCr && i == start && lineLength == 0;
            lastWasCr = b == '\r';
            if (crlfTail) {
                start = i + 1;
                continue;
            }
            appendLine(bytes, start, i - start);
            endLine(events);
            start = i + 1;
        }
        if (start < bytes.length) {
            lastWasCr = false;
            appendLine(bytes, start, bytes.length - start);
        }
        return events;
    }

    /** Whether the payload is the end marker {@value #DONE} (surrounding whitespace aside). */
    public static boolean isDone(byte[] payload) {
        int from = 0;
        int to = payload.length;
        while (from < to && payload[from] <= ' ') {
            from++;
        }
        while (to > from && payload[to - 1] <= ' ') {
            to--;
        }
        return Arrays.equals(payload, from, to, DONE_BYTES, 0, DONE_BYTES.length);
    }

    /** Whether bytes of an unfinished event are buffered (a stream that ends here was cut mid-event). */
    public boolean hasPartialEvent() {
        return lineLength > 0 || hasData;
    }

    private void endLine(List<byte[]> events) {
        if (lineLength == 0) {
            if (hasData) {
                events.add(Arrays.copyOf(data, dataLength));
            }
            dataLength = 0;
            hasData = false;
            return;
        }
        int length = lineLength;
        lineLength = 0;
        if (line[0] == ':') {
            return;
        }
        int colon = indexOf(line, length, (byte) ':');
        int fieldEnd = colon < 0 ? length : colon;
        if (!Arrays.equals(line, 0, fieldEnd, DATA, 0, DATA.length)) {
            return;
        }
        int value = colon < 0 ? length : colon + 1;
        if (value < length && line[value] == ' ') {
            value++;
        }
        if (hasData) {
            appendData(new byte[] {'\n'}, 0, 1);
        }
        appendData(line, value, length - value);
        hasData = true;
    }

    private void appendLine(byte[] bytes, int from, int length) {
        if (lineLength + length > line.length) {
            line = Arrays.copyOf(line, Math.max(line.length * 2, lineLength + length));
        }
        System.arraycopy(bytes, from, line, lineLength, length);
        lineLength += length;
    }

    private void appendData(byte[] bytes, int from, int length) {
        if (dataLength + length > data.length) {
            data = Arrays.copyOf(data, Math.max(data.length * 2, dataLength + length));
        }
        System.arraycopy(bytes, from, data, dataLength, length);
        dataLength += length;
    }

    private static int indexOf(byte[] bytes, int length, byte wanted) {
        for (int i = 0; i < length; i++) {
            if (bytes[i] == wanted) {
                return i;
            }
        }
        return -1;
    }
}
