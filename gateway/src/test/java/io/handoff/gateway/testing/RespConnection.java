package io.handoff.gateway.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Just enough of the Redis protocol for a test to administer its own servers over a plain socket (no client
 * library, no pool, nothing shared with the store under test): commands go out as RESP arrays, so arguments may
 * hold spaces and symbols such as ACL rules; replies come back as text.
 */
final class RespConnection {

    /** What kind of reply Redis sent, and the marker it starts with. */
    enum Kind {
        STATUS('+'),
        ERROR('-'),
        INTEGER(':'),
        TEXT('$'),
        ARRAY('*');

        private final char marker;

        Kind(char marker) {
            this.marker = marker;
        }

        char marker() {
            return marker;
        }
    }

    /** A reply as text: an array's elements one per line, a null as the empty string. */
    record Reply(Kind kind, String text) {
    }

    private final OutputStream out;
    private final InputStream in;

    RespConnection(Socket socket) throws IOException {
        this.out = socket.getOutputStream();
        this.in = new BufferedInputStream(socket.getInputStream());
    }

    Reply call(List<String> command) throws IOException {
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.writeBytes(("*" + command.size() + "\r\n").getBytes(StandardCharsets.US_ASCII));
        for (String argument : command) {
            byte[] bytes = argument.getBytes(StandardCharsets.UTF_8);
            request.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            request.writeBytes(bytes);
            request.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.write(request.toByteArray());
        out.flush();
        return read();
    }

    private Reply read() throws IOException {
        int marker = in.read();
        if (marker < 0) {
            throw new EOFException("the server closed the connection");
        }
        String line = line();
        switch (marker) {
            case '+':
                return new Reply(Kind.STATUS, line);
            case '-':
                return new Reply(Kind.ERROR, line);
            case ':':
                return new Reply(Kind.INTEGER, line);
            case '$': {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return new Reply(Kind.TEXT, "");
                }
                byte[] bytes = in.readNBytes(length + 2);
                return new Reply(Kind.TEXT, new String(bytes, 0, length, StandardCharsets.UTF_8));
            }
            case '*': {
                int count = Integer.parseInt(line);
                StringBuilder elements = new StringBuilder();
                for (int i = 0; i < count; i++) {
                    if (i > 0) {
                        elements.append('\n');
                    }
                    elements.append(read().text());
                }
                return new Reply(Kind.ARRAY, elements.toString());
            }
            default:
                throw new IOException("not a RESP2 reply: " + (char) marker + line);
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\r'; b = in.read()) {
            if (b < 0) {
                throw new EOFException("the server closed the connection mid-reply");
            }
            line.write(b);
        }
        in.read(); // the '\n' after the '\r'
        return line.toString(StandardCharsets.UTF_8);
    }
}
