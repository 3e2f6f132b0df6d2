package io.handoff.gateway.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A real redis-server child process on a free loopback port, owned by the test that started it, so the test can
 * stop it (to see the gateway fail cleanly) and start it again on the same port. Never persists anything.
 */
public final class RedisServer implements AutoCloseable {

    private static final int LAUNCHES = 20;

    private final int port;
    private Process process;

    private RedisServer(int port) {
        this.port = port;
    }

    /**
     * A server on a port that was free a moment ago. Another process may take that port between the probe and the
     * bind; the server then fails to start, and another free port is tried.
     */
    public static RedisServer startOnFreePort() {
        IllegalStateException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            RedisServer server = new RedisServer(freePort());
            try {
                server.start();
                return server;
            } catch (IllegalStateException taken) {
                last = taken;
            }
        }
        throw last;
    }

    public int port() {
        return port;
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    /**
     * Starts the server on its port and waits until it answers. A restart on the same port may find the port still
     * refused for a moment (or taken by a short-lived socket of another process): a bounded number of launches is
     * tried. Only a server that reports this child's process id counts as started, never another redis-server that
     * happens to answer on the port.
     */
    public synchronized void start() {
        if (process != null && process.isAlive()) {
            return;
        }
        for (int launch = 1; ; launch++) {
            process = launch();
            Instant deadline = Instant.now().plus(Duration.ofSeconds(10));
            while (process.isAlive() && !answersAsThisProcess()) {
                if (Instant.now().isAfter(deadline)) {
                    process.destroyForcibly();
                    throw new IllegalStateException("redis-server did not answer on port " + port);
                }
                sleep(20);
            }
            if (process.isAlive()) {
                return;
            }
            if (launch == LAUNCHES) {
                throw new IllegalStateException("redis-server could not listen on port " + port + " after " + launch
                        + " launches (the port is taken)");
            }
            sleep(100);
        }
    }

    private Process launch() {
        try {
            return new ProcessBuilder(List.of("redis-server", "--port", Integer.toString(port), "--bind",
                    "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes", "--loglevel",
                    "warning"))
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException("redis-server is not installed (apt-get install redis-server)", e);
        }
    }

    public synchronized void stop() {
        if (process == null) {
            return;
        }
        process.destroy();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    @Override
    public void close() {
        stop();
    }

    /** Sends one inline command (e.g. {@code CLIENT PAUSE 3000 WRITE}) and returns the first line of the reply. */
    public String command(String inline) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write((inline + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            byte[] reply = new byte[256];
            int n = socket.getInputStream().read(reply);
            return n <= 0 ? "" : new String(reply, 0, n, StandardCharsets.US_ASCII).lines().findFirst().orElse("");
        } catch (IOException e) {
            throw new IllegalStateException("redis-server on port " + port + " did not answer " + inline, e);
        }
    }

    private boolean answersAsThisProcess() {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(500);
            OutputStream out = socket.getOutputStream();
            out.write("INFO server\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] reply = new byte[8192];
            int n = in.read(reply);
            String text = n > 0 ? new String(reply, 0, n, StandardCharsets.US_ASCII) : "";
            return text.contains("process_id:" + process.pid() + "\r\n");
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
