package io.handoff.chaos;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The one redis-server every replica shares, in a directory of its own, with an append-only file synced on every
 * write ({@code appendfsync always}): a kill -9 and restart then loses nothing Redis acknowledged, so every
 * invariant the harness checks must hold across it. It comes back on the same port, which the replicas' URL names.
 */
final class RedisNode implements RedisStore {

    private final Path dir;
    private int port;
    private ChildProcess process;
    private int launches;

    RedisNode(Path dir) {
        this.dir = dir;
    }

    /**
     * Starts on a port that was free a moment ago. Another process may take it between the probe and Redis's bind:
     * Redis then exits, and another free port is tried. Only a server that reports this child's pid counts.
     */
    void start() {
        for (int attempt = 1; ; attempt++) {
            port = freePort();
            if (launch()) {
                return;
            }
            if (attempt == 5) {
                throw new IllegalStateException("redis-server could not listen on a free port; see " + process.log());
            }
        }
    }

    /** Starts again on the same port (the replicas' URL); a port still in TIME_WAIT or taken is tried again. */
    void restart() {
        for (int attempt = 1; ; attempt++) {
            if (launch()) {
                return;
            }
            if (attempt == 20) {
                throw new IllegalStateException("redis-server did not come back on port " + port);
            }
            Sleep.millis(100);
        }
    }

    private boolean launch() {
        launches++;
        List<String> command = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind",
                "127.0.0.1", "--dir", dir.toString(), "--save", "", "--appendonly", "yes", "--appendfsync", "always",
                "--protected-mode", "yes", "--loglevel", "warning"));
        process = ChildProcess.start("redis", command, dir.resolve("redis-" + launches + ".log"));
        Instant deadline = Instant.now().plus(Duration.ofSeconds(20));
        while (process.alive()) {
            if (answersAsThisProcess()) {
                return true;
            }
            if (Instant.now().isAfter(deadline)) {
                process.kill9();
                throw new IllegalStateException("redis-server did not answer on port " + port);
            }
            Sleep.millis(20);
        }
        return false;
    }

    String url() {
        return "redis://127.0.0.1:" + port;
    }

    @Override
    public Map<String, String> gatewayEnvironment() {
        return Map.of("HANDOFF_REDIS_URL", url());
    }

    void kill9() {
        process.kill9();
    }

    /**
     * Kills with kill -9, removes what it kept on disk (the append-only files, any snapshot), and starts it again on
     * its port: a Redis that persists nothing (or lost its disk) restarting, every key and script gone.
     */
    void killAndRestartEmpty() throws IOException {
        process.kill9();
        for (String name : new String[] {"appendonlydir", "appendonly.aof", "dump.rdb"}) {
            deleteTree(dir.resolve(name));
        }
        restart();
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> all = Files.walk(p)) {
            for (Path each : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(each);
            }
        }
    }

    void pause() {
        process.pause();
    }

    void resume() {
        process.resume();
    }

    @Override
    public void stop() {
        if (process != null && process.alive()) {
            process.stop();
        }
    }

    private boolean answersAsThisProcess() {
        try {
            return command("INFO", "server").contains("process_id:" + process.pid() + "\r\n");
        } catch (IOException notYet) {
            return false;
        }
    }

    /** One command to this Redis (see {@link Resp}). */
    String command(String... words) throws IOException {
        return Resp.command(port, words);
    }

    /**
     * Empties the store under load, as an operator's {@code FLUSHALL} would, or a restart of a Redis that keeps
     * nothing: every key and every loaded script gone; the process and its port stay.
     */
    @Override
    public void wipe() throws IOException {
        Resp.ok(port, "FLUSHALL");
        Resp.ok(port, "SCRIPT", "FLUSH");
    }

    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
