package io.handoff.chaos;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * A Redis Cluster of the harness's own, as operators run one: three masters with one replica each, six
 * {@code redis-server --cluster-enabled yes} on loopback ports probed free (each with its bus port, + 10000), joined by
 * {@code redis-cli --cluster create --cluster-replicas 1}. Nothing is persisted: a node killed and started again comes
 * back empty and takes its data from its master. A short {@code cluster-node-timeout} lets a replica take over a killed
 * master within a few seconds.
 */
final class RedisClusterNodes implements RedisStore {

    /** How long a node may be unreachable before the others count it failed and its replica takes over. */
    static final long NODE_TIMEOUT_MS = 1000;

    private static final int MASTERS = 3;
    private static final Duration CONVERGENCE = Duration.ofSeconds(30);

    /** One redis-server of the cluster: its port, folder and the process now running on them (if any). */
    private static final class Node {
        final int index;
        final int port;
        final Path dir;
        ChildProcess process;
        int launches;

        Node(int index, int port, Path dir) {
            this.index = index;
            this.port = port;
            this.dir = dir;
        }

        String address() {
            return "127.0.0.1:" + port;
        }

        boolean running() {
            return process != null && process.alive();
        }
    }

    private final Path dir;
    private final List<Node> nodes = new ArrayList<>();
    private final List<String> initialMasters = new ArrayList<>();

    RedisClusterNodes(Path dir) {
        this.dir = dir;
    }

    /** Starts six nodes, joins them into a cluster and waits until every node agrees it is whole. */
    void start() throws IOException {
        for (int i = 0; i < 2 * MASTERS; i++) {
            Node node = startNode(i);
            nodes.add(node);
        }
        List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
        nodes.forEach(n -> create.add(n.address()));
        create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
        run(create);
        awaitConverged("the cluster to form");
        masters().forEach(n -> initialMasters.add("redis://" + n.address()));
    }

    /** A node on a port that was free a moment ago with its bus port; another is tried if Redis could not bind. */
    private Node startNode(int index) throws IOException {
        for (int attempt = 1; attempt <= 5; attempt++) {
            Node node = new Node(index, freePortWithBus(), Files.createDirectories(dir.resolve("node-" + index)));
            if (launch(node)) {
                return node;
            }
        }
        throw new IllegalStateException("redis-server " + index + " could not listen on a free port; see " + dir);
    }

    private boolean launch(Node node) {
        node.launches++;
        List<String> command = List.of("redis-server", "--port", Integer.toString(node.port), "--bind", "127.0.0.1",
                "--dir", node.dir.toString(), "--cluster-enabled", "yes",
                "--cluster-config-file", node.dir.resolve("nodes.conf").toString(),
                "--cluster-node-timeout", Long.toString(NODE_TIMEOUT_MS),
                // a replica that has not finished its first sync cannot take over; do not wait 5 s to start it
                "--repl-diskless-sync-delay", "0",
                "--save", "", "--appendonly", "no", "--protected-mode", "yes", "--loglevel", "warning");
        node.process = ChildProcess.start("redis-" + node.index, command,
                node.dir.resolve("redis-" + node.launches + ".log"));
        Instant deadline = Instant.now().plus(Duration.ofSeconds(20));
        while (node.process.alive()) {
            try {
                if (Resp.command(node.port, "INFO", "server").contains("process_id:" + node.process.pid() + "\r\n")) {
                    return true;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (Instant.now().isAfter(deadline)) {
                node.process.kill9();
                throw new IllegalStateException("redis-server " + node.index + " did not answer on " + node.port);
            }
            Sleep.millis(20);
        }
        return false;
    }

    /** The masters as the cluster was formed, comma-separated: what a replica is given as its seeds. */
    String url() {
        return String.join(",", initialMasters);
    }

    @Override
    public Map<String, String> gatewayEnvironment() {
        return Map.of("HANDOFF_REDIS_URL", url(), "QUARKUS_REDIS_CLIENT_TYPE", "cluster");
    }

    /** FLUSHALL and SCRIPT FLUSH on every master (the replicas follow) and every node's scripts flushed. */
    @Override
    public void wipe() throws IOException {
        for (Node master : masters()) {
            Resp.ok(master.port, "FLUSHALL");
        }
        for (Node node : nodes) {
            if (node.running()) {
                Resp.ok(node.port, "SCRIPT", "FLUSH");
            }
        }
    }

    /**
     * A graceful failover of a random master: {@code CLUSTER FAILOVER} on its replica, which first takes every write
     * the master acknowledged, then takes over. Returns once every node agrees; answers what moved.
     */
    String failOver() {
        Node master = randomMaster();
        Node replica = replicaOf(master);
        try {
            Resp.ok(replica.port, "CLUSTER", "FAILOVER");
        } catch (IOException e) {
            throw new IllegalStateException("CLUSTER FAILOVER on " + replica.address() + ": " + e.getMessage(), e);
        }
        awaitTrue(() -> role(replica).equals("master") && role(master).equals("slave"),
                "replica " + replica.address() + " to take over from " + master.address());
        awaitConverged("the cluster to agree on the failover");
        return replica.address() + " took over from " + master.address();
    }

    /** What a master's kill did: when it was killed, when its replica had taken over, and who. */
    record MasterKill(String killed, String promoted, long killedNs, long promotedNs) {
    }

    /**
     * kill -9 of a random master; waits until its replica has taken over (node timeout plus an election), then starts
     * the killed node again on its port and configuration, where it rejoins as the new master's replica, and waits
     * until it has synchronised and every node agrees (so that the next kill finds a replica able to take over).
     * Writes the master acknowledged but had not sent to its replica are lost: replication is asynchronous.
     */
    MasterKill killMaster() {
        Node master = randomMaster();
        Node replica = replicaOf(master);
        long killedNs = System.nanoTime();
        master.process.kill9();
        awaitTrue(() -> role(replica).equals("master"), "replica " + replica.address() + " to take over");
        long promotedNs = System.nanoTime();
        // only now: a node back before its replica took over would be a master again, empty
        for (int attempt = 1; !launch(master); attempt++) {
            if (attempt == 20) {
                throw new IllegalStateException("redis-server " + master.index + " did not come back on "
                        + master.port);
            }
            Sleep.millis(100);
        }
        awaitTrue(() -> role(master).equals("slave"), "the killed node " + master.address() + " to rejoin");
        awaitConverged("the cluster to heal after the kill of " + master.address());
        return new MasterKill(master.address(), replica.address(), killedNs, promotedNs);
    }

    @Override
    public void stop() {
        for (Node node : nodes) {
            if (node.running()) {
                node.process.resume();
                node.process.kill9(); // nothing is persisted: nothing to shut down gracefully
            }
        }
    }

    private Node randomMaster() {
        List<Node> masters = masters();
        return masters.get(ThreadLocalRandom.current().nextInt(masters.size()));
    }

    private List<Node> masters() {
        return nodes.stream().filter(Node::running).filter(n -> role(n).equals("master")).toList();
    }

    /** The running replica of {@code master}, as the replica itself reports it. */
    private Node replicaOf(Node master) {
        return nodes.stream().filter(Node::running).filter(n -> n != master)
                .filter(n -> info(n, "replication").contains("master_port:" + master.port + "\r\n"))
                .findFirst().orElseThrow(() -> new IllegalStateException("no replica of " + master.address()));
    }

    /**
     * Every node runs and sees the cluster whole, all name the same slot owners, there are three masters, and every
     * replica holds its master's data (its link is up): only such a replica can take over.
     */
    private void awaitConverged(String what) {
        awaitTrue(() -> {
            Optional<String> owners = Optional.empty();
            for (Node node : nodes) {
                if (!node.running()) {
                    return false;
                }
                String replication = info(node, "replication");
                if (replication.contains("role:slave") && !replication.contains("master_link_status:up")) {
                    return false;
                }
                String cluster = command(node, "CLUSTER", "INFO");
                if (!cluster.contains("cluster_state:ok") || !cluster.contains("cluster_slots_ok:16384")) {
                    return false;
                }
                String seen = slotOwners(node);
                if (owners.isPresent() && !owners.get().equals(seen)) {
                    return false;
                }
                owners = Optional.of(seen);
            }
            return masters().size() == MASTERS;
        }, what);
    }

    /** The masters that serve slots, as {@code node} sees them, in one order. */
    private static String slotOwners(Node node) {
        return command(node, "CLUSTER", "NODES").lines().map(line -> line.split(" "))
                .filter(f -> f.length > 8 && f[2].contains("master") && !f[2].contains("fail"))
                .map(f -> f[1] + " " + String.join(" ", List.of(f).subList(8, f.length)))
                .sorted().collect(Collectors.joining("\n"));
    }

    private static String role(Node node) {
        String replication = info(node, "replication");
        if (replication.contains("role:master")) {
            return "master";
        }
        return replication.contains("role:slave") ? "slave" : "unreachable";
    }

    private static String info(Node node, String section) {
        return command(node, "INFO", section);
    }

    /** A command's answer, or an empty text while the node does not answer (killed, or not yet up). */
    private static String command(Node node, String... words) {
        if (!node.running()) {
            return "";
        }
        try {
            return Resp.command(node.port, words);
        } catch (IOException unreachable) {
            return "";
        }
    }

    private static void awaitTrue(BooleanSupplier condition, String what) {
        Instant deadline = Instant.now().plus(CONVERGENCE);
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException("waited " + CONVERGENCE.toSeconds() + " s in vain for " + what);
            }
            Sleep.millis(50);
        }
    }

    /** A port free now whose cluster bus port (+ 10000) is free too. */
    private static int freePortWithBus() {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = RedisNode.freePort();
            if (port + 10_000 > 65_535) {
                continue;
            }
            try (ServerSocket bus = new ServerSocket(port + 10_000)) {
                return port;
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IllegalStateException("no free port with a free bus port");
    }

    private static void run(List<String> command) throws IOException {
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IllegalStateException("redis-cli is missing (apt-get install redis-tools)", e);
        }
        try {
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IOException(String.join(" ", command) + " failed:\n" + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IOException("interrupted", e);
        }
    }
}
