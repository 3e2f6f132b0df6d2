package io.handoff.gateway.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A real redis-server child process on a free loopback port, owned by the test that started it, so the test can
 * stop it (to see the gateway fail cleanly), kill it, and start it again on the same ports. Never persists anything.
 *
 * <p>The plain port always serves the test itself (as the administrator, with {@link Options#adminPassword} when
 * there is one); a server started with a TLS port serves the store there as well.
 */
public final class RedisServer implements AutoCloseable {

    private static final int LAUNCHES = 20;

    /**
     * Every server process this JVM started and has not stopped: killed when the JVM exits, so a test that died
     * before its own cleanup (or a helper it never closed) leaves no redis-server behind.
     */
    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly),
                "redis-server-reaper"));
    }

    /** What a server runs with beyond its port. */
    public record Options(List<String> arguments, String adminPassword, SecondPort secondPort) {

        public static Options plain() {
            return new Options(List.of(), null, SecondPort.NONE);
        }

        public Options withArguments(List<String> more) {
            List<String> all = new ArrayList<>(arguments);
            all.addAll(more);
            return new Options(List.copyOf(all), adminPassword, secondPort);
        }

        /** The default user's password: the test's own administrator, never the store's user. */
        public Options withAdminPassword(String password) {
            return new Options(arguments, password, secondPort);
        }

        public Options withSecondPort(SecondPort kind) {
            return new Options(arguments, adminPassword, kind);
        }
    }

    /** A second free port some servers need: a TLS listener, or a Cluster node's bus. */
    public enum SecondPort {
        NONE,
        TLS,
        CLUSTER_BUS
    }

    private final int port;
    private final int secondPort;
    private final Options options;
    private Process process;

    private RedisServer(int port, int secondPort, Options options) {
        this.port = port;
        this.secondPort = secondPort;
        this.options = options;
    }

    public static RedisServer startOnFreePort() {
        return startOnFreePort(Options.plain());
    }

    /**
     * A server on ports that were free a moment ago. Another process may take one between the probe and the bind;
     * the server then fails to start, and other free ports are tried.
     */
    public static RedisServer startOnFreePort(Options options) {
        IllegalStateException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            RedisServer server = new RedisServer(freePort(),
                    options.secondPort() == SecondPort.NONE ? 0 : freePort(), options);
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

    /** The TLS listener's port; only for a server started with {@link SecondPort#TLS}. */
    public int tlsPort() {
        if (options.secondPort() != SecondPort.TLS) {
            throw new IllegalStateException("this server has no TLS port");
        }
        return secondPort;
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    /** {@code host:port}, as redis-cli and Cluster replies name a node. */
    public String address() {
        return "127.0.0.1:" + port;
    }

    /**
     * Starts the server on its ports and waits until it answers. A restart on the same port may find the port still
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
        List<String> command = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind",
                "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes", "--loglevel",
                "warning"));
        if (options.adminPassword() != null) {
            command.addAll(List.of("--requirepass", options.adminPassword()));
        }
        switch (options.secondPort()) {
            case TLS -> command.addAll(List.of("--tls-port", Integer.toString(secondPort)));
            case CLUSTER_BUS -> command.addAll(List.of("--cluster-port", Integer.toString(secondPort)));
            case NONE -> { }
        }
        command.addAll(options.arguments());
        try {
            Process started = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            RUNNING.add(started);
            return started;
        } catch (IOException e) {
            throw new IllegalStateException("redis-server is not installed (apt-get install redis-server)", e);
        }
    }

    public synchronized void stop() {
        if (process == null) {
            return;
        }
        process.destroy();
        awaitExit();
    }

    /** kill -9: the server gets no chance to do anything more, as when its machine dies. */
    public synchronized void kill() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        awaitExit();
    }

    /**
     * SIGSTOP: the server answers nothing, reads and {@code CLIENT UNPAUSE} included, until {@link #thaw()}; unlike
     * {@code CLIENT PAUSE ALL}, which cannot be lifted early because it holds back its own UNPAUSE.
     */
    public synchronized void freeze() {
        signal("-STOP");
    }

    /** SIGCONT: a frozen server goes on where it stopped. */
    public synchronized void thaw() {
        signal("-CONT");
    }

    private void signal(String signal) {
        if (process == null) {
            throw new IllegalStateException("redis-server on port " + port + " is not running");
        }
        try {
            int exit = new ProcessBuilder("kill", signal, Long.toString(process.pid())).inheritIO().start().waitFor();
            if (exit != 0) {
                throw new IllegalStateException("kill " + signal + " of redis-server on port " + port + " exited "
                        + exit);
            }
        } catch (IOException e) {
            throw new IllegalStateException("kill " + signal + " could not run", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while signalling redis-server", e);
        }
    }

    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    private void awaitExit() {
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        RUNNING.remove(process);
        process = null;
    }

    @Override
    public void close() {
        stop();
    }

    /**
     * Sends one inline command (e.g. {@code CLIENT PAUSE 3000 WRITE}) and returns the first line of the reply as
     * Redis sent it ({@code +OK}, {@code -ERR ...}, {@code :1}).
     */
    public String command(String inline) {
        RespConnection.Reply reply = call(List.of(inline.split(" ")));
        String first = reply.text().lines().findFirst().orElse("");
        return switch (reply.kind()) {
            case STATUS, ERROR, INTEGER -> reply.kind().marker() + first;
            case TEXT, ARRAY -> first;
        };
    }

    /**
     * Sends one command as the administrator and answers its reply as text: a status or a bulk string as it is,
     * an error as {@code -<message>}, an integer in decimal, an array one element per line.
     */
    public String reply(String... command) {
        RespConnection.Reply reply = call(List.of(command));
        return reply.kind() == RespConnection.Kind.ERROR ? "-" + reply.text() : reply.text();
    }

    private RespConnection.Reply call(List<String> command) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5000);
            RespConnection connection = new RespConnection(socket);
            if (options.adminPassword() != null) {
                RespConnection.Reply auth = connection.call(List.of("AUTH", options.adminPassword()));
                if (auth.kind() == RespConnection.Kind.ERROR) {
                    throw new IllegalStateException("the administrator was refused: " + auth.text());
                }
            }
            return connection.call(command);
        } catch (IOException e) {
            throw new IllegalStateException("redis-server on port " + port + " did not answer "
                    + String.join(" ", command), e);
        }
    }

    private boolean answersAsThisProcess() {
        try {
            return reply("INFO", "server").contains("process_id:" + process.pid() + "\r\n");
        } catch (IllegalStateException notYet) {
            return false;
        }
    }

    static int freePort() {
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
