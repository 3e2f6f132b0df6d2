package io.handoff.gateway.session.store;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * One Lua script from {@code src/main/resources/redis}, with {@code lib.lua} (the helpers every script shares)
 * prepended. Sent by its SHA-1; when Redis answers NOSCRIPT (it was restarted or flushed its script cache) the
 * source is sent once more with EVAL, which also caches it again.
 */
final class RedisScript {

    private final String name;
    private final String source;
    private final String sha;

    private RedisScript(String name, String source) {
        this.name = name;
        this.source = source;
        this.sha = sha1(source);
    }

    static RedisScript load(String name) {
        return new RedisScript(name, read("lib") + "\n" + read(name));
    }

    private static String read(String name) {
        String resource = "/redis/" + name + ".lua";
        try (InputStream in = RedisScript.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing script " + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String name() {
        return name;
    }

    String source() {
        return source;
    }

    Uni<Response> run(Redis redis, List<String> keys, List<String> args) {
        return RedisCalls.send(redis, request(Command.EVALSHA, sha, keys, args))
                .onFailure(RedisScript::isNoScript)
                .recoverWithUni(() -> RedisCalls.send(redis, request(Command.EVAL, source, keys, args)));
    }

    private static Request request(Command command, String script, List<String> keys, List<String> args) {
        Request request = Request.cmd(command).arg(script).arg(keys.size());
        keys.forEach(request::arg);
        args.forEach(request::arg);
        return request;
    }

    private static boolean isNoScript(Throwable failure) {
        return failure.getMessage() != null && failure.getMessage().startsWith("NOSCRIPT");
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
