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
 *
 * <p>Every relayed token passes through here, so the common case is copied once: a line that lies whole in the
 * chunk is read where it lies, and the single {@code data} line of an event that also ends in the chunk is copied
 * straight into its payload. Only what runs past the end of a chunk is carried in buffers of its own.
 */
public final class SseDecoder {

    /** The payload OpenAI-compatible servers send as the last event of a stream. */
    public static final String DONE = "[DONE]";

    private static final byte[] DATA = "data".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DONE_BYTES = DONE.getBytes(StandardCharsets.US_ASCII);

    /** The start of a line whose end has not arrived yet. */
    private byte[] line = new byte[256];
    private int lineLength;
    /** The data of the current event, once it spans more than one line or more than one chunk. */
    private byte[] data = new byte[256];
    private int dataLength;
    private boolean hasData;
    private boolean lastWasCr;

    /** The current event's only data line, still where it lies in the chunk being fed (null when not so). */
    private byte[] heldSource;
    private int heldFrom;
    private int heldLength;

    /** The payloads completed by the chunk being fed: the first alone, a list from the second on. */
    private byte[] firstEvent;
    private List<byte[]> events;

    /** Decodes the next chunk of the stream and returns the payloads of the events it completed. */
    public List<byte[]> feed(byte[] bytes) {
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
            if (lineLength == 0) {
                endLine(bytes, start, i - start);
            } else {
                appendLine(bytes, start, i - start);
                int length = lineLength;
                lineLength = 0;
                endLine(line, 0, length);
            }
            start = i + 1;
        }
        if (start < bytes.length) {
            lastWasCr = false;
            appendLine(bytes, start, bytes.length - start);
        }
        // the chunk is the caller's: a data line still held in it is carried over in a buffer of our own
        unhold();
        return completed();
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

    private void endLine(byte[] source, int from, int length) {
        if (length == 0) {
            if (hasData) {
                complete(heldSource != null
                        ? Arrays.copyOfRange(heldSource, heldFrom, heldFrom + heldLength)
                        : Arrays.copyOf(data, dataLength));
            }
            heldSource = null;
            dataLength = 0;
            hasData = false;
            return;
        }
        if (source[from] == ':') {
            return;
        }
        int end = from + length;
        int colon = indexOf(source, from, end, (byte) ':');
        int fieldEnd = colon < 0 ? end : colon;
        if (!Arrays.equals(source, from, fieldEnd, DATA, 0, DATA.length)) {
            return;
        }
        int value = colon < 0 ? end : colon + 1;
        if (value < end && source[value] == ' ') {
            value++;
        }
        if (!hasData && source != line) {
            heldSource = source;
            heldFrom = value;
            heldLength = end - value;
            hasData = true;
            return;
        }
        unhold();
        if (hasData) {
            appendData(LINE_FEED, 0, 1);
        }
        appendData(source, value, end - value);
        hasData = true;
    }

    private static final byte[] LINE_FEED = {'\n'};

    private void unhold() {
        if (heldSource != null) {
            byte[] source = heldSource;
            heldSource = null;
            appendData(source, heldFrom, heldLength);
        }
    }

    private void complete(byte[] payload) {
        if (events != null) {
            events.add(payload);
        } else if (firstEvent == null) {
            firstEvent = payload;
        } else {
            events = new ArrayList<>(4);
            events.add(firstEvent);
            events.add(payload);
            firstEvent = null;
        }
    }

    private List<byte[]> completed() {
        List<byte[]> done;
        if (events != null) {
            done = events;
        } else if (firstEvent != null) {
            done = List.of(firstEvent);
        } else {
            done = List.of();
        }
        events = null;
        firstEvent = null;
        return done;
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

    private static int indexOf(byte[] bytes, int from, int to, byte wanted) {
        for (int i = from; i < to; i++) {
            if (bytes[i] == wanted) {
                return i;
            }
        }
        return -1;
    }
}
