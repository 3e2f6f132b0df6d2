package io.handoff.gateway.session.store;

import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionFailure;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Response;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Rate limits in Redis, shared by every replica on it: one {@code rate_limit.lua} call per decision, over every
 * limit of the tenant at once (their keys share the tenant's hash tag, see {@link RedisKeys#rateLimit}).
 */
public final class RedisRateLimitStore implements RateLimitStore {

    private static final RedisScript RATE_LIMIT = RedisScript.load("rate_limit");

    /**
     * How long a limit's key outlives its TAT in Redis. Redis expires by its own clock, the TAT is the replicas'
     * clocks: the grace absorbs the skew between them (and a test clock that stands still while real time runs),
     * so a limit is never forgotten before the callers' time reaches its end. A key kept longer changes nothing.
     */
    static final Duration KEY_GRACE = Duration.ofMinutes(1);

    private final Redis redis;
    private final RedisKeys keys;
    private final Duration timeout;
    private final StoreReachability reachability = new StoreReachability("the rate-limit store (Redis)");

    public RedisRateLimitStore(Redis redis, String keyPrefix, Duration timeout) {
        this.redis = redis;
        this.keys = new RedisKeys(keyPrefix);
        this.timeout = timeout;
    }

    @Override
    public Uni<RateVerdict> take(String tenant, List<RateCharge> charges, Instant now) {
        return guard(run(tenant, charges, now, "take").map(reply -> {
            if ("OK".equals(reply.get(0).toString())) {
                return RateVerdict.ALLOWED;
            }
            String limit = charges.get(reply.get(1).toInteger() - 1).limit().name();
            return RateVerdict.limited(limit, Long.parseLong(reply.get(2).toString()));
        }));
    }

    @Override
    public Uni<Void> adjust(String tenant, List<RateCharge> corrections, Instant now) {
        return guard(run(tenant, corrections, now, "adjust").replaceWithVoid());
    }

    private Uni<Response> run(String tenant, List<RateCharge> charges, Instant now, String mode) {
        List<String> scriptKeys = new ArrayList<>();
        List<String> args = new ArrayList<>(List.of(Long.toString(Gcra.micros(now)), mode,
                Long.toString(KEY_GRACE.toMillis())));
        for (RateCharge c : charges) {
            scriptKeys.add(keys.rateLimit(tenant, c.limit().name()));
            args.add(Double.toString(c.limit().intervalMicros()));
            args.add(Long.toString(c.limit().burst()));
            args.add(Long.toString(c.cost()));
        }
        return RATE_LIMIT.run(redis, scriptKeys, args);
    }

    private <T> Uni<T> guard(Uni<T> operation) {
        return operation.ifNoItem().after(timeout)
                .failWith(() -> new SessionException(SessionFailure.STORE_UNAVAILABLE,
                        "rate-limit store did not answer within " + timeout.toMillis() + " ms"))
                .onFailure(failure -> !(failure instanceof SessionException))
                // the driver's own text (with Redis's address) stays the cause, out of the client's message
                .transform(failure -> new SessionException(SessionFailure.STORE_UNAVAILABLE,
                        "rate-limit store unavailable (" + failure.getClass().getSimpleName() + ")", null, failure))
                .onItemOrFailure().invoke((item, failure) -> reachability.observed(failure));
    }
}
