package io.handoff.benchmarks;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.ProtocolVersion;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The bare Redis round trip of one session transition, without the gateway: sessions are created directly with the
 * gateway's own {@code create.lua} under a private key prefix, then each is moved ALLOCATED -> READY by one EVALSHA of
 * {@code transition.lua}, with the KEYS/ARGV the gateway's RedisSessionStore sends. The scripts are read from the
 * gateway's source tree, never copied, each after the shared {@code lib.lua} as the gateway loads them. Uses the same
 * client as the gateway (Vert.x Redis, pooled, RESP2).
 */
final class BareTransitionScript implements AutoCloseable {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final HexFormat HEX = HexFormat.of();
    private static final long TIMEOUT_MS = 10_000;
    /** The gateway's defaults: handoff.session.tombstone-retention=10m, default lease 30s, tenant "default". */
    private static final String RETENTION_MS = Long.toString(600_000);
    private static final long LEASE_MS = 30_000;
    private static final String TENANT = "default";

    private final Vertx vertx;
    private final Redis redis;
    private final String prefix = "bench-" + UUID.randomUUID();
    private final String createSha;
    private final String transitionSha;
    private volatile boolean closing;

    BareTransitionScript(String url, Path transitionScript, Path createScript) throws Exception {
        // as the gateway loads them (RedisScript): each after the helpers they share, lib.lua beside transition.lua
        String lib = read(transitionScript.resolveSibling("lib.lua")) + "\n";
        String transition = lib + read(transitionScript);
        String create = lib + read(createScript);
        this.vertx = Vertx.vertx();
        this.redis = Redis.createClient(vertx, new RedisOptions().setConnectionString(url)
                .setPreferredProtocolVersion(ProtocolVersion.RESP2).setMaxPoolSize(4).setMaxPoolWaiting(64));
        this.createSha = load(create);
        this.transitionSha = load(transition);
    }

    String prefix() {
        return prefix;
    }

    String redisVersion() throws Exception {
        String info = await(redis.send(Request.cmd(Command.INFO).arg("server"))).toString();
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                return line.substring("redis_version:".length()).trim();
            }
        }
        return "unknown";
    }

    /** Creates one ALLOCATED session (not timed) and answers its id. */
    String createSession() throws Exception {
        if (closing) {
            throw new IllegalStateException("cleaning up: no new sessions");
        }
        String id = HEX.formatHex(randomBytes(16));
        long now = System.currentTimeMillis();
        String nowMs = Long.toString(now);
        String expires = Long.toString(now + LEASE_MS);
        List<String> args = new ArrayList<>(40);
        args.add(expires);
        args.add(id);
        field(args, "id", id);
        field(args, "tenant", TENANT);
        field(args, "rid", "bench-" + id);
        field(args, "model", "bench-model");
        field(args, "ikey", "bench-" + id);
        field(args, "fp", HEX.formatHex(randomBytes(16)));
        field(args, "style", "CONTEXT_FIRST");
        field(args, "disp", "REQUIRED");
        field(args, "state", "ALLOCATED");
        field(args, "epoch", "1");
        field(args, "created", nowMs);
        field(args, "updated", nowMs);
        field(args, "lease", Long.toString(LEASE_MS));
        field(args, "expires", expires);
        field(args, "renewals", "0");
        field(args, "pending", "0");
        field(args, "route", "");
        field(args, "attrs", "");
        Response reply = await(redis.send(evalsha(createSha, sessionKeys(id), args)));
        if (!"CREATED".equals(reply.get(0).toString())) {
            throw new IllegalStateException("create.lua answered " + reply);
        }
        return id;
    }

    /** One timed round trip: EVALSHA transition.lua moving the session ALLOCATED -> READY. Answers nanoseconds. */
    long transitionToReady(String id) throws Exception {
        // Exactly the ARGV RedisSessionStore.transition sends for a non-terminal move without a claimant.
        List<String> args = List.of(
                id,
                TENANT,
                "",
                ",ALLOCATED,",
                "READY",
                "0",
                "",
                Long.toString(System.currentTimeMillis()),
                RETENTION_MS,
                "",
                "1");
        Request request = evalsha(transitionSha, sessionKeys(id), args);
        long start = System.nanoTime();
        Response reply = await(redis.send(request));
        long elapsed = System.nanoTime() - start;
        if (!"OK".equals(reply.get(0).toString())) {
            throw new IllegalStateException("transition.lua answered " + reply.get(0) + " for " + id);
        }
        return elapsed;
    }

    /**
     * Deletes every key under this run's prefix (and nothing else); answers how many were deleted. Creates nothing
     * afterwards, and sweeps twice so a create that was already on the wire is caught too.
     */
    long cleanUp() throws Exception {
        closing = true;
        long deleted = sweep();
        Thread.sleep(50);
        return deleted + sweep();
    }

    private long sweep() throws Exception {
        long deleted = 0;
        String cursor = "0";
        do {
            Response page = await(redis.send(Request.cmd(Command.SCAN).arg(cursor).arg("MATCH").arg(prefix + ":*")
                    .arg("COUNT").arg(1000)));
            cursor = page.get(0).toString();
            Response keys = page.get(1);
            if (keys.size() > 0) {
                Request del = Request.cmd(Command.UNLINK);
                for (Response key : keys) {
                    String k = key.toString();
                    if (!k.startsWith(prefix + ":")) {
                        throw new IllegalStateException("refusing to delete foreign key " + k);
                    }
                    del.arg(k);
                }
                deleted += await(redis.send(del)).toLong();
            }
        } while (!"0".equals(cursor));
        return deleted;
    }

    private List<String> sessionKeys(String id) {
        String tag = "{s" + id.substring(0, 2) + "}";
        return List.of(prefix + ":" + tag + ":session:" + id, prefix + ":" + tag + ":due",
                prefix + ":" + tag + ":counts");
    }

    private String load(String source) throws Exception {
        String sha = await(redis.send(Request.cmd(Command.SCRIPT).arg("LOAD").arg(source))).toString();
        if (!sha.equals(sha1(source))) {
            throw new IllegalStateException("Redis answered SHA " + sha + " for a script whose SHA-1 is "
                    + sha1(source));
        }
        return sha;
    }

    private static Request evalsha(String sha, List<String> keys, List<String> args) {
        Request request = Request.cmd(Command.EVALSHA).arg(sha).arg(keys.size());
        keys.forEach(request::arg);
        args.forEach(request::arg);
        return request;
    }

    private static void field(List<String> args, String name, String value) {
        args.add(name);
        args.add(value);
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    private static String read(Path path) throws IOException {
        if (!Files.isRegularFile(path)) {
            throw new IOException("script not found: " + path.toAbsolutePath()
                    + " (run from the repository root or pass --script / --create-script)");
        }
        return Files.readString(path, StandardCharsets.UTF_8);
    }

    private static String sha1(String text) {
        try {
            return HEX.formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static <T> T await(Future<T> future) throws Exception {
        return future.toCompletionStage().toCompletableFuture().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() throws Exception {
        try {
            redis.close();
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
    }
}
