package io.handoff.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One Redis command over a fresh loopback connection, in RESP: enough for the harness's administration (INFO, PING,
 * FLUSHALL, CLUSTER ...). A bulk reply is answered as its text, any other reply as its first line (an error as
 * {@code -ERR ...}, an array as {@code *N}).
 */
final class Resp {

    private Resp() {
    }

    static String command(int port, String... words) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(3000);
            StringBuilder req = new StringBuilder("*" + words.length + "\r\n");
            for (String w : words) {
                req.append('$').append(w.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(w)
                        .append("\r\n");
            }
            OutputStream out = s.getOutputStream();
            out.write(req.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
            String first = in.readLine();
            if (first == null) {
                throw new IOException("no reply");
            }
            if (first.startsWith("$")) {
                int len = Integer.parseInt(first.substring(1));
                char[] body = new char[Math.max(len, 0)];
                int read = 0;
                while (read < len) {
                    int n = in.read(body, read, len - read);
                    if (n < 0) {
                        break;
                    }
                    read += n;
                }
                return new String(body, 0, read);
            }
            return first;
        }
    }

    /** A command whose answer must be {@code +OK}; anything else is a failure naming the command. */
    static void ok(int port, String... words) throws IOException {
        String answer = command(port, words);
        if (!answer.equals("+OK")) {
            throw new IOException(String.join(" ", words) + " on port " + port + " answered " + answer);
        }
    }
}
