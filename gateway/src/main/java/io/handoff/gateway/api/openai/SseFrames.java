package io.handoff.gateway.api.openai;

import io.vertx.core.buffer.Buffer;

import java.nio.charset.StandardCharsets;

/** Server-sent event framing as the engines frame it: {@code data: <json>\n\n}, and {@code data: [DONE]} last. */
final class SseFrames {

    private static final byte[] DATA = "data: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END_OF_EVENT = "\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DONE = "[DONE]".getBytes(StandardCharsets.US_ASCII);

    private SseFrames() {
    }

    static void append(Buffer out, byte[] json) {
        out.appendBytes(DATA).appendBytes(json).appendBytes(END_OF_EVENT);
    }

    static void done(Buffer out) {
        append(out, DONE);
    }
}
