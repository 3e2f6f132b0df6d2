package io.handoff.gateway.testing;

import io.vertx.redis.client.RedisClientType;
import io.vertx.redis.client.RedisOptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * A real Redis Cluster of the test's own: three masters with one replica each, six redis-server processes on free
 * loopback ports, joined by {@code redis-cli --cluster create}. Each node runs with a short
 * {@code cluster-node-timeout}, so a replica takes over a killed master within a few seconds. Closing it stops
 * every node, whatever state the test left them in.
 */
public final class RedisCluster implements AutoCloseable {

    /** How long a node may be unreachable before the others count it as failed (a replica then takes over). */
    public static final Duration NODE_TIMEOUT = Duration.ofMillis(1000);

    private static final int MASTERS = 3;
    private static final Duration CONVERGENCE = Duration.ofSeconds(30);

    private final Path directory;
    private final RedisServer.Options nodeOptions;
    private final List<RedisServer> nodes = new ArrayList<>();

    private RedisCluster(Path directory, RedisServer.Options nodeOptions) {
        this.directory = directory;
        this.nodeOptions = nodeOptions;
    }

    /** A cluster whose nodes are administered without a password. */
    public static RedisCluster start() {
        return start(RedisServer.Options.plain());
    }

    /**
     * A cluster whose nodes also run with {@code options} (an administrator's password makes every replica
     * authenticate to its master with it). Nodes that started are stopped again if the cluster cannot form.
     */
    public static RedisCluster start(RedisServer.Options options) {
        Path directory;
        try {
            directory = Files.createTempDirectory("handoff-redis-cluster");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        RedisCluster cluster = new RedisCluster(directory, options);
        try {
            cluster.form();
            return cluster;
        } catch (RuntimeException | Error failure) {
            cluster.close();
            throw failure;
        }
    }

    private void form() {
        for (int i = 0; i < 2 * MASTERS; i++) {
            List<String> clusterArguments = new ArrayList<>(List.of("--cluster-enabled", "yes",
                    "--cluster-config-file", directory.resolve("nodes-" + i + ".conf").toString(),
                    "--cluster-node-timeout", Long.toString(NODE_TIMEOUT.toMillis()),
                    // a replica that has not finished its first sync cannot take over; Redis would otherwise wait
                    // 5 s for more replicas before it starts sending the data
                    "--repl-diskless-sync-delay", "0",
                    "--dir", directory.toString()));
            if (nodeOptions.adminPassword() != null) {
                clusterArguments.addAll(List.of("--masterauth", nodeOptions.adminPassword()));
            }
            nodes.add(RedisServer.startOnFreePort(nodeOptions.withArguments(clusterArguments)
                    .withSecondPort(RedisServer.SecondPort.CLUSTER_BUS)));
        }
        List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
        nodes.forEach(node -> create.add(node.address()));
        create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
        if (nodeOptions.adminPassword() != null) {
            create.addAll(List.of("-a", nodeOptions.adminPassword(), "--no-auth-warning"));
        }
        run(create);
        awaitConverged("the cluster to form");
    }

    /** Every node that was started, masters and replicas, running or killed. */
    public List<RedisServer> nodes() {
        return List.copyOf(nodes);
    }

    /**
     * Options of the cluster client as {@code quarkus.redis.client-type=cluster} makes it, given the masters of
     * now as {@code quarkus.redis.hosts}, each URL naming the documented ACL user and {@code password}.
     */
    public RedisOptions clientOptions(String password) {
        RedisOptions options = new RedisOptions().setType(RedisClientType.CLUSTER);
        masters().forEach(master -> options.addConnectionString(RedisAcl.urlAs(password, master.url())));
        return options;
    }

    /** The master that serves {@code key}'s hash slot now. */
    public RedisServer masterOf(String key) {
        int slot = Integer.parseInt(masters().get(0).reply("CLUSTER", "KEYSLOT", key));
        for (RedisServer master : masters()) {
            String[] own = master.reply("CLUSTER", "NODES").lines().filter(line -> line.contains("myself"))
                    .findFirst().orElseThrow().split(" ");
            for (int i = 8; i < own.length; i++) {
                String[] range = own[i].split("-");
                int first = Integer.parseInt(range[0]);
                int last = range.length > 1 ? Integer.parseInt(range[1]) : first;
                if (first <= slot && slot <= last) {
                    return master;
                }
            }
        }
        throw new IllegalStateException("no master serves slot " + slot);
    }

    public List<RedisServer> masters() {
        return nodes.stream().filter(RedisServer::isRunning).filter(node -> role(node).equals("master")).toList();
    }

    /** The running replica of {@code master}, as the replica itself reports it. */
    public RedisServer replicaOf(RedisServer master) {
        return nodes.stream().filter(RedisServer::isRunning).filter(node -> node != master)
                .filter(node -> node.reply("INFO", "replication").contains("master_port:" + master.port() + "\r\n"))
                .findFirst().orElseThrow(() -> new IllegalStateException("no replica of " + master.address()));
    }

    /**
     * A graceful failover ({@code CLUSTER FAILOVER} on the replica): the master stops taking writes, the replica
     * catches up with every write the master acknowledged, and only then takes over. Answers the new master once
     * every node agrees.
     */
    public RedisServer failOver(RedisServer master) {
        RedisServer replica = replicaOf(master);
        String answer = replica.reply("CLUSTER", "FAILOVER");
        if (!"OK".equals(answer)) {
            throw new IllegalStateException("CLUSTER FAILOVER refused: " + answer);
        }
        awaitTrue(() -> role(replica).equals("master") && role(master).equals("slave"),
                "the replica " + replica.address() + " to take over from " + master.address());
        awaitConverged("the cluster to agree on the failover");
        return replica;
    }

    /**
     * Kills {@code master} with SIGKILL and waits until its replica has taken over (after {@link #NODE_TIMEOUT} and
     * an election) and every surviving node agrees. Writes the master acknowledged but had not yet sent to its
     * replica are lost: Redis replicates asynchronously.
     */
    public RedisServer killMaster(RedisServer master) {
        RedisServer replica = replicaOf(master);
        master.kill();
        awaitTrue(() -> role(replica).equals("master"), "the replica " + replica.address() + " to take over");
        awaitConverged("the surviving nodes to agree on the new master");
        return replica;
    }

    /**
     * Leaves {@code slot} served by no node: every master forgets it, so that the slot map any node answers has a hole
     * there, as it may for a moment during a failover. {@link #serveAgain} gives it back.
     */
    public void unserve(int slot) {
        for (RedisServer master : masters()) {
            master.reply("CLUSTER", "DELSLOTS", Integer.toString(slot));
        }
        awaitTrue(() -> masters().stream().allMatch(m -> m.reply("CLUSTER", "INFO").contains("cluster_state:fail")),
                "every master to see slot " + slot + " unserved");
    }

    /** {@code master} serves {@code slot} again, and the cluster agrees. */
    public void serveAgain(int slot, RedisServer master) {
        master.reply("CLUSTER", "ADDSLOTS", Integer.toString(slot));
        awaitConverged("the cluster to agree that slot " + slot + " is served again");
    }

    /** The hash slot of {@code key}. */
    public int slotOf(String key) {
        return Integer.parseInt(masters().get(0).reply("CLUSTER", "KEYSLOT", key));
    }

    @Override
    public void close() {
        RuntimeException first = null;
        for (RedisServer node : nodes) {
            try {
                node.kill(); // nothing is persisted, so nothing is lost by not shutting down gracefully
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        try (Stream<Path> files = Files.walk(directory)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind harms nothing
        }
        if (first != null) {
            throw first;
        }
    }

    /**
     * Every running node sees the whole cluster healthy, all of them name the same slot owners, and every replica
     * holds its master's data (its link is up): only such a replica can take over.
     */
    private void awaitConverged(String what) {
        awaitTrue(() -> {
            List<RedisServer> running = nodes.stream().filter(RedisServer::isRunning).toList();
            Optional<String> owners = Optional.empty();
            for (RedisServer node : running) {
                String replication = node.reply("INFO", "replication");
                if (replication.contains("role:slave") && !replication.contains("master_link_status:up")) {
                    return false;
                }
                String info = node.reply("CLUSTER", "INFO");
                if (!info.contains("cluster_state:ok") || !info.contains("cluster_slots_ok:16384")) {
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

    /** The masters that serve slots, as {@code node} sees them, in a canonical order. */
    private static String slotOwners(RedisServer node) {
        return node.reply("CLUSTER", "NODES").lines()
                .map(line -> line.split(" "))
                .filter(fields -> fields[2].contains("master") && !fields[2].contains("fail") && fields.length > 8)
                .map(fields -> fields[1] + " " + String.join(" ", List.of(fields).subList(8, fields.length)))
                .sorted().reduce("", (a, b) -> a + "\n" + b);
    }

    private static String role(RedisServer node) {
        try {
            return node.reply("ROLE").lines().findFirst().orElse("");
        } catch (IllegalStateException unreachable) {
            return "unreachable";
        }
    }

    private static void awaitTrue(BooleanSupplier condition, String what) {
        Instant deadline = Instant.now().plus(CONVERGENCE);
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException("timed out after " + CONVERGENCE.toSeconds() + " s waiting for "
                        + what);
            }
            pause();
        }
    }

    /** Between two looks at the cluster: long enough not to flood six servers, short next to a failover. */
    private static void pause() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static void run(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
            }
        } catch (IOException e) {
            throw new IllegalStateException("redis-cli is not installed (apt-get install redis-tools)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
