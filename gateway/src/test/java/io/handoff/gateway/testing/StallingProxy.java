package io.handoff.gateway.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on loopback in front of one engine that can stop passing the engine's bytes on, as an engine that
 * hangs mid-stream does: the connections stay open, nothing more arrives. Closing either side closes both.
 */
public final class StallingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile boolean stalled;

    private StallingProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "stalling-proxy-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public static StallingProxy to(int targetPort) {
        try {
            return new StallingProxy(targetPort);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public String url() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    /** From now on the engine's bytes are held back (the client's still reach the engine). */
    public void stall() {
        stalled = true;
    }

    public void resume() {
        synchronized (gate) {
            stalled = false;
            gate.notifyAll();
        }
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket engine = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                client.setTcpNoDelay(true);
                engine.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(engine);
                pump(client, engine, false);
                pump(engine, client, true);
            } catch (IOException e) {
                // closed, or the engine refused: the client sees its connection closed
            }
        }
    }

    private void pump(Socket from, Socket to, boolean stallable) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    if (stallable) {
                        awaitNotStalled();
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // one side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "stalling-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private void awaitNotStalled() throws InterruptedException {
        synchronized (gate) {
            while (stalled) {
                gate.wait();
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() {
        resume();
        closeQuietly(server);
        sockets.forEach(StallingProxy::closeQuietly);
    }

    private static void closeQuietly(ServerSocket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
