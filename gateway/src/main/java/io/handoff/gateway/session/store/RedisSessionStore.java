package io.handoff.gateway.session.store;

import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.NewSession;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionFailure;
import io.handoff.gateway.session.SessionIds;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.SessionTransitions;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Sessions in Redis, shared by any number of gateway replicas. Every decision that must be atomic is one Lua
 * script inside one Cluster slot (see {@link RedisKeys}); the tenant's bookkeeping lives in another slot and is
 * kept in step by a second, self-healing call ({@code tenant_touch.lua}, or a plain {@code ZREM} for an ending). On
 * one Redis ({@link RedisDeployment#SINGLE_NODE}) an allocation and an ending each do both in one script.
 *
 * <p>Expects the RESP2 protocol (flat arrays), which is how the gateway configures its client.
 */
public final class RedisSessionStore implements SessionStore {

    /** How long an idempotency key outlives the tombstone it points at, so a slow retry still finds it. */
    private static final Duration KEY_MARGIN = Duration.ofMinutes(5);

    /** Tells reserve.lua that no holder of the key may be replaced (no key's value is empty). */
    private static final String NO_ENDED_HOLDER = "";

    private static final RedisScript RESERVE = RedisScript.load("reserve");
    private static final RedisScript CREATE = RedisScript.load("create");
    private static final RedisScript ALLOCATE = RedisScript.load("allocate");
    private static final RedisScript RENEW = RedisScript.load("renew");
    private static final RedisScript TRANSITION = RedisScript.load("transition");
    private static final RedisScript RECORD_OBLIGATION = RedisScript.load("record_obligation");
    private static final RedisScript REAP = RedisScript.load("reap");
    private static final RedisScript PURGE = RedisScript.load("purge");
    private static final RedisScript TENANT_TOUCH = RedisScript.load("tenant_touch");
    private static final RedisScript COMPLETE_CLEANUP = RedisScript.load("complete_cleanup");

    private static final Logger LOG = Logger.getLogger(RedisSessionStore.class);

    private final Redis redis;
    private final RedisKeys keys;
    private final StoreSettings settings;
    private final Duration timeout;
    private final RedisDeployment deployment;
    private final StoreReachability reachability = new StoreReachability("the session store (Redis)");

    public RedisSessionStore(Redis redis, String keyPrefix, StoreSettings settings, Duration timeout,
            RedisDeployment deployment) {
        this.deployment = deployment;
        this.redis = redis;
        this.keys = new RedisKeys(keyPrefix);
        this.settings = settings;
        this.timeout = timeout;
    }

    @Override
    public String kind() {
        return "redis";
    }

    @Override
    public Uni<Allocation> allocate(NewSession s) {
        return guard(reserve(s, NO_ENDED_HOLDER));
    }

    /**
     * Reserves the idempotency key for {@code s}, or answers the session that holds it.
     *
     * @param endedHolder the key's value ({@code <id>|<fingerprint>}) when its holder was found ended and may be
     *                    replaced, else {@link #NO_ENDED_HOLDER}
     */
    private Uni<Allocation> reserve(NewSession s, String endedHolder) {
        Duration keyTtl = Duration.between(s.now(), s.leaseExpiresAt()).plus(settings.tombstoneRetention())
                .plus(KEY_MARGIN);
        List<String> tenantKeys = List.of(keys.idempotency(s.tenant(), s.idempotencyKey()),
                keys.tenantLive(s.tenant()));
        List<String> args = new ArrayList<>(List.of(s.id(), s.fingerprint(), SessionCodec.millis(s.now()),
                Long.toString(keyTtl.toMillis()), Integer.toString(settings.maxLivePerTenant()),
                SessionCodec.millis(s.leaseExpiresAt()), endedHolder));
        if (deployment == RedisDeployment.SINGLE_NODE) {
            List<String> allKeys = List.of(tenantKeys.get(0), tenantKeys.get(1), keys.session(s.id()),
                    keys.dueOf(s.id()), keys.countsOf(s.id()));
            args.addAll(SessionCodec.fieldsOf(s));
            return run(ALLOCATE, allKeys, args).flatMap(reply -> reserved(s, reply, () -> created(s, reply)));
        }
        return run(RESERVE, tenantKeys, args).flatMap(reply -> reserved(s, reply, () -> create(s)));
    }

    /** What a reservation answered: a full quota or a held key, or else what {@code next} makes of it. */
    private Uni<Allocation> reserved(NewSession s, Response reply, Supplier<Uni<Allocation>> next) {
        switch (reply.get(0).toString()) {
            case "QUOTA":
                return Uni.createFrom().failure(new SessionException(SessionFailure.QUOTA_EXCEEDED,
                        "tenant has " + reply.get(1) + " live sessions, the most it may have"));
            case "EXISTING":
                // the key's holder (allocate.lua calls a record already under this id EXISTING_RECORD)
                return answerHolder(s, reply.get(1).toString());
            default:
                return next.get();
        }
    }

    /**
     * The key is held by another session. Its record is created here if the replica that reserved the key died
     * before creating it, so the holder is always answered as a stored session.
     */
    private Uni<Allocation> answerHolder(NewSession s, String held) {
        String[] holder = held.split("\\|", 2);
        if (!s.replaceEnded()) {
            if (!holder[1].equals(s.fingerprint())) {
                return Uni.createFrom().failure(new SessionException(SessionFailure.IDEMPOTENCY_CONFLICT,
                        "idempotency key already used for a different allocation request"));
            }
            return create(withId(s, holder[0]));
        }
        // Liveness is read from the holder's record, not from the tenant's live index: the index is a hint that
        // can lag a renewal, and replacing a holder that is still live would run its request twice. An ended
        // session never becomes live again, so the verdict still holds when reserve.lua replaces the key.
        return create(withId(s, holder[0])).flatMap(answer -> answer.session().isLiveAt(s.now())
                ? Uni.createFrom().item(answer)
                : reserve(s, held));
    }

    private Uni<Allocation> create(NewSession s) {
        List<String> args = new ArrayList<>();
        args.add(SessionCodec.millis(s.leaseExpiresAt()));
        args.add(s.id());
        args.addAll(SessionCodec.fieldsOf(s));
        return run(CREATE, sessionKeys(s.id()), args).flatMap(reply -> created(s, reply));
    }

    /** What {@code create_record} answered: the new session, or the one stored under its id already. */
    private static Uni<Allocation> created(NewSession s, Response reply) {
        if ("CREATED".equals(reply.get(0).toString())) {
            return Uni.createFrom().item(new Allocation(new Session(s.id(), s.tenant(), s.requestId(), s.model(),
                    s.idempotencyKey(), s.fingerprint(), s.style(), s.disposition(), SessionState.ALLOCATED, 1,
                    s.now(), s.now(), s.lease(), s.leaseExpiresAt(), 0, "", null, null, s.attributes(), s.route(),
                    s.traceParent(), Map.of(), List.of()), true));
        }
        return Uni.createFrom().item(new Allocation(SessionCodec.fromFields(fields(reply.get(1))), false));
    }

    private static NewSession withId(NewSession s, String id) {
        return new NewSession(id, s.tenant(), s.requestId(), s.model(), s.idempotencyKey(), s.fingerprint(),
                s.style(), s.disposition(), s.lease(), s.now(), s.attributes(), s.route(), s.traceParent(),
                s.replaceEnded());
    }

    @Override
    public Uni<Optional<Session>> find(String sessionId) {
        return guard(RedisCalls.send(redis, Request.cmd(Command.HGETALL).arg(keys.session(sessionId))).map(reply -> {
            Map<String, String> h = fields(reply);
            return h.isEmpty() ? Optional.<Session>empty() : Optional.of(SessionCodec.fromFields(h));
        }));
    }

    @Override
    public Uni<Session> renew(String tenant, String sessionId, Duration lease, Instant newExpiry,
            OptionalLong expectedEpoch, Instant now) {
        Uni<Session> flow = run(RENEW, List.of(keys.session(sessionId), keys.dueOf(sessionId)),
                List.of(tenant, epochArg(expectedEpoch), SessionCodec.millis(newExpiry),
                        Long.toString(lease.toMillis()), SessionCodec.millis(now), sessionId))
                .flatMap(reply -> {
                    String outcome = reply.get(0).toString();
                    if (!"OK".equals(outcome)) {
                        return Uni.createFrom().failure(refusal(outcome, reply, expectedEpoch, null));
                    }
                    Session renewed = SessionCodec.fromFields(fields(reply.get(1)));
                    return touchTenant(renewed, "live", now).replaceWith(renewed);
                });
        return guard(flow);
    }

    @Override
    public Uni<Transitioned> transition(TransitionCommand c) {
        String sources = SessionTransitions.sourcesOf(c.firstStep()).stream().map(Enum::name)
                .collect(Collectors.joining(",", ",", ","));
        boolean terminal = c.target().isTerminal();
        List<String> args = new ArrayList<>(List.of(
                c.sessionId(),
                c.tenant() == null ? "" : c.tenant(),
                epochArg(c.expectedEpoch()),
                sources,
                c.target().name(),
                terminal ? "1" : "0",
                c.reason() == null ? "" : c.reason(),
                SessionCodec.millis(c.now()),
                Long.toString(settings.tombstoneRetention().toMillis()),
                c.claimant() == null ? "" : Long.toString(c.claimTtl().toMillis()),
                Integer.toString(c.steps())));
        for (CleanupObligation settled : c.settled()) {
            args.add(settled.id());
            args.add(SessionCodec.encodeObligation(settled));
        }
        // where one Redis holds every key, an ending leaves the tenant's live index in the same script
        boolean leavesInScript = terminal && c.tenant() != null && deployment == RedisDeployment.SINGLE_NODE;
        List<String> scriptKeys = new ArrayList<>(sessionKeys(c.sessionId()));
        if (leavesInScript) {
            scriptKeys.add(keys.tenantLive(c.tenant()));
        }
        Uni<Transitioned> flow = run(TRANSITION, scriptKeys, args)
                .flatMap(reply -> {
                    String outcome = reply.get(0).toString();
                    if (!"OK".equals(outcome)) {
                        return Uni.createFrom().failure(refusal(outcome, reply, c.expectedEpoch(), c.firstStep()));
                    }
                    Session moved = SessionCodec.fromFields(fields(reply.get(2)));
                    Transitioned result = new Transitioned(moved, claimOf(reply.get(1).toLong(), moved));
                    return terminal && !leavesInScript ? leaveTenantLive(moved).replaceWith(result)
                            : Uni.createFrom().item(result);
                });
        return guard(flow);
    }

    @Override
    public Uni<Session> recordObligation(String tenant, String sessionId, CleanupObligation obligation, Instant now) {
        return guard(run(RECORD_OBLIGATION, List.of(keys.session(sessionId), keys.dueOf(sessionId),
                keys.heldOf(sessionId)),
                List.of(sessionId, tenant == null ? "" : tenant, obligation.id(),
                        SessionCodec.encodeObligation(obligation), SessionCodec.millis(now)))
                .flatMap(reply -> "OK".equals(reply.get(0).toString())
                        ? Uni.createFrom().item(SessionCodec.fromFields(fields(reply.get(1))))
                        : Uni.createFrom().failure(SessionException.notFound())));
    }

    @Override
    public Uni<List<List<DueEntry>>> findDue(Instant now, int limitPerBucket) {
        IntFunction<Request> read = bucket -> Request.cmd(Command.ZRANGEBYSCORE).arg(keys.due(bucket)).arg("-inf")
                .arg(SessionCodec.millis(now)).arg("WITHSCORES").arg("LIMIT").arg(0).arg(limitPerBucket);
        if (deployment == RedisDeployment.SINGLE_NODE) {
            return guard(everyBucket(read).map(replies -> replies.stream().map(RedisSessionStore::dueEntries)
                    .toList()));
        }
        // the buckets spread over the Cluster's nodes: a node that cannot answer leaves the others' buckets to sweep
        return Uni.join().all(IntStream.range(0, SessionIds.BUCKETS).mapToObj(bucket -> guard(
                RedisCalls.send(redis, read.apply(bucket)).map(RedisSessionStore::dueEntries))
                .onFailure().invoke(f -> LOG.debugf("could not read due-index bucket %d: %s", bucket, f.getMessage()))
                .onFailure().recoverWithItem(List.<DueEntry>of())).toList()).andFailFast();
    }

    private static List<DueEntry> dueEntries(Response reply) {
        List<DueEntry> due = new ArrayList<>(reply.size() / 2);
        for (int i = 0; i + 1 < reply.size(); i += 2) {
            due.add(new DueEntry(reply.get(i).toString(),
                    Instant.ofEpochMilli((long) Double.parseDouble(reply.get(i + 1).toString()))));
        }
        return due;
    }

    @Override
    public Uni<ReapStep> reap(String sessionId, Instant now, String replica, Duration claimTtl) {
        Uni<ReapStep> flow = run(REAP, sessionKeys(sessionId), List.of(sessionId, SessionCodec.millis(now),
                Long.toString(claimTtl.toMillis()), Long.toString(settings.tombstoneRetention().toMillis())))
                .flatMap(reply -> {
                    String outcome = reply.get(0).toString();
                    switch (outcome) {
                        case "GONE":
                            return Uni.createFrom().item(new ReapStep(ReapStep.Kind.GONE, null, CleanupClaim.NONE));
                        case "NOT_DUE":
                            return Uni.createFrom().item(new ReapStep(ReapStep.Kind.NOT_DUE, null, CleanupClaim.NONE));
                        case "EXPIRED": {
                            Session expired = SessionCodec.fromFields(fields(reply.get(2)));
                            ReapStep step = new ReapStep(ReapStep.Kind.EXPIRED, expired,
                                    claimOf(reply.get(1).toLong(), expired));
                            return leaveTenantLive(expired).replaceWith(step);
                        }
                        case "CLAIMED": {
                            Session held = SessionCodec.fromFields(fields(reply.get(2)));
                            return Uni.createFrom().item(new ReapStep(ReapStep.Kind.CLEANUP_CLAIMED, held,
                                    claimOf(reply.get(1).toLong(), held)));
                        }
                        default:
                            return purge(SessionCodec.fromFields(fields(reply.get(2))), now);
                    }
                });
        return guard(flow);
    }

    /** Forget the idempotency key first: a retry must never find a key that points at a purged record. */
    private Uni<ReapStep> purge(Session tombstone, Instant now) {
        return touchTenant(tombstone, "purged", now)
                .flatMap(ignored -> run(PURGE, sessionKeys(tombstone.id()),
                        List.of(tombstone.id(), SessionCodec.millis(now))))
                .map(reply -> "PURGED".equals(reply.toString())
                        ? new ReapStep(ReapStep.Kind.PURGED, tombstone, CleanupClaim.NONE)
                        : new ReapStep(ReapStep.Kind.NOT_DUE, tombstone, CleanupClaim.NONE));
    }

    @Override
    public Uni<Boolean> completeCleanup(String sessionId, long claimToken, List<CleanupObligation> obligations,
            Instant retryAt, Instant keepUntil, Instant now) {
        List<String> args = new ArrayList<>();
        args.add(sessionId);
        args.add(Long.toString(claimToken));
        args.add(SessionCodec.millis(retryAt));
        args.add(keepUntil == null ? "" : SessionCodec.millis(keepUntil));
        args.add(SessionCodec.millis(now));
        for (CleanupObligation o : obligations) {
            args.add(SessionCodec.OBLIGATION_PREFIX + o.id());
            args.add(SessionCodec.encodeObligation(o));
        }
        return guard(run(COMPLETE_CLEANUP, List.of(keys.session(sessionId), keys.dueOf(sessionId),
                keys.heldOf(sessionId)), args)
                .map(reply -> reply.toLong() == 1L));
    }

    @Override
    public Uni<Map<SessionState, Long>> countByState() {
        return guard(everyBucket(b -> Request.cmd(Command.HGETALL).arg(keys.counts(b))).map(replies -> {
            Map<SessionState, Long> counts = new EnumMap<>(SessionState.class);
            for (SessionState state : SessionState.values()) {
                counts.put(state, 0L);
            }
            for (Response reply : replies) {
                fields(reply).forEach((state, n) -> counts.merge(SessionState.valueOf(state), Long.parseLong(n),
                        Long::sum));
            }
            return counts;
        }));
    }

    @Override
    public Uni<Long> countEngineHeld(Instant now) {
        return guard(everyBucket(b -> Request.cmd(Command.ZCOUNT).arg(keys.held(b))
                .arg("(" + SessionCodec.millis(now)).arg("+inf"))
                .map(replies -> replies.stream().mapToLong(Response::toLong).sum()));
    }

    /**
     * One command per bucket of the index, the replies in bucket order. On one Redis they go out as one pipelined
     * batch: a round trip, a write and a read for all of them, where a command each cost Redis a read and the
     * gateway a reply each, {@value SessionIds#BUCKETS} times a sweep or a sample. On a Cluster the buckets spread
     * over the nodes' hash slots, and each command goes to its own node.
     */
    private Uni<List<Response>> everyBucket(IntFunction<Request> command) {
        List<Request> commands = IntStream.range(0, SessionIds.BUCKETS).mapToObj(command).toList();
        if (deployment == RedisDeployment.SINGLE_NODE) {
            return RedisCalls.batch(redis, commands);
        }
        return Uni.join().all(commands.stream().map(request -> RedisCalls.send(redis, request)).toList())
                .andFailFast();
    }

    @Override
    public Uni<List<Session>> soonestLeases(Collection<String> tenants, Instant now, int limit) {
        List<Request> perTenant = new ArrayList<>(tenants.size());
        for (String tenant : tenants) {
            perTenant.add(firstAfter(keys.tenantLive(tenant), now, limit));
        }
        // the index is a hint that can lag a renewal: the records say which are live and until when
        return guard(soonestOf(perTenant, limit).map(found -> found.stream().filter(s -> s.isLiveAt(now))
                .sorted(Comparator.comparing(Session::leaseExpiresAt).thenComparing(Session::id)).toList()));
    }

    @Override
    public Uni<List<Session>> soonestReleases(Instant now, int limit) {
        List<Request> perBucket = new ArrayList<>(SessionIds.BUCKETS);
        for (int b = 0; b < SessionIds.BUCKETS; b++) {
            perBucket.add(firstAfter(keys.held(b), now, limit));
        }
        return guard(soonestOf(perBucket, limit).map(found -> found.stream()
                .filter(s -> s.engineMayHoldKv(now)).toList()));
    }

    /** The first {@code limit} members of a sorted set scored after {@code now}, with their scores. */
    private static Request firstAfter(String sortedSet, Instant now, int limit) {
        return Request.cmd(Command.ZRANGEBYSCORE).arg(sortedSet).arg("(" + SessionCodec.millis(now)).arg("+inf")
                .arg("WITHSCORES").arg("LIMIT").arg(0).arg(limit);
    }

    /** The records of the {@code limit} lowest-scored members over the answers of {@code ranges}, lowest first. */
    private Uni<List<Session>> soonestOf(List<Request> ranges, int limit) {
        if (ranges.isEmpty() || limit <= 0) {
            return Uni.createFrom().item(List.of());
        }
        return Uni.join().all(ranges.stream().map(command -> RedisCalls.send(redis, command)).toList()).andFailFast().flatMap(replies -> {
            List<DueEntry> members = new ArrayList<>();
            for (Response reply : replies) {
                for (int i = 0; i + 1 < reply.size(); i += 2) {
                    members.add(new DueEntry(reply.get(i).toString(), score(reply.get(i + 1).toString())));
                }
            }
            List<String> ids = members.stream()
                    .sorted(Comparator.comparing(DueEntry::due).thenComparing(DueEntry::sessionId))
                    .limit(limit).map(DueEntry::sessionId).distinct().toList();
            if (ids.isEmpty()) {
                return Uni.createFrom().item(List.<Session>of());
            }
            return Uni.join().all(ids.stream().map(id -> RedisCalls.send(redis, Request.cmd(Command.HGETALL)
                    .arg(keys.session(id)))).toList()).andFailFast()
                    .map(records -> records.stream().map(RedisSessionStore::fields).filter(h -> !h.isEmpty())
                            .map(SessionCodec::fromFields).toList());
        });
    }

    /** A sorted set's score as an instant; {@code inf} (a hold with no known end) is the farthest one. */
    private static Instant score(String score) {
        return score.endsWith("inf") ? Instant.MAX
                : Instant.ofEpochMilli((long) Double.parseDouble(score));
    }

    @Override
    public Uni<Optional<Session>> findByIdempotencyKey(String tenant, String idempotencyKey) {
        return guard(RedisCalls.send(redis, Request.cmd(Command.GET).arg(keys.idempotency(tenant, idempotencyKey)))
                .flatMap(reply -> {
                    String value = reply == null ? "" : reply.toString();
                    int bar = value.indexOf('|');
                    String sessionId = bar < 0 ? value : value.substring(0, bar);
                    if (!SessionIds.isWellFormed(sessionId)) {
                        return Uni.createFrom().item(Optional.<Session>empty());
                    }
                    return find(sessionId).map(found -> found.filter(s -> s.tenant().equals(tenant)));
                }));
    }

    @Override
    public Uni<Optional<Instant>> drainingSince() {
        return guard(RedisCalls.send(redis, Request.cmd(Command.GET).arg(keys.drain())).map(reply -> reply == null
                ? Optional.<Instant>empty() : Optional.of(Instant.ofEpochMilli(Long.parseLong(reply.toString())))));
    }

    @Override
    public Uni<Instant> startDrain(Instant now) {
        return guard(RedisCalls.send(redis, Request.cmd(Command.SET).arg(keys.drain()).arg(SessionCodec.millis(now)).arg("NX"))
                .flatMap(ignored -> drainingSince()).map(since -> since.orElse(now)));
    }

    @Override
    public Uni<Void> stopDrain() {
        return guard(RedisCalls.send(redis, Request.cmd(Command.DEL).arg(keys.drain())).replaceWithVoid());
    }

    @Override
    public Uni<Long> countLive(String tenant, Instant now) {
        return guard(RedisCalls.send(redis, Request.cmd(Command.ZCOUNT).arg(keys.tenantLive(tenant))
                .arg("(" + SessionCodec.millis(now)).arg("+inf")).map(Response::toLong));
    }

    @Override
    public Uni<Void> ping() {
        return guard(RedisCalls.send(redis, Request.cmd(Command.PING)).replaceWithVoid());
    }

    /**
     * An ended session no longer counts against its tenant's quota. Its idempotency key keeps the life it was given
     * (lease expiry, retention and a margin), which outlasts the tombstone; the purge deletes it first.
     */
    private Uni<Void> leaveTenantLive(Session s) {
        return RedisCalls.send(redis, Request.cmd(Command.ZREM).arg(keys.tenantLive(s.tenant())).arg(s.id())).replaceWithVoid();
    }

    /** A renewed session ({@code live}) or a purged one: its live-index entry and its idempotency key's life. */
    private Uni<Void> touchTenant(Session s, String mode, Instant now) {
        Instant keyUntil = s.isTerminal() ? s.tombstoneExpiresAt() : s.leaseExpiresAt().plus(
                settings.tombstoneRetention());
        long keyTtl = Math.max(1, Duration.between(now, keyUntil).plus(KEY_MARGIN).toMillis());
        return run(TENANT_TOUCH, List.of(keys.idempotency(s.tenant(), s.idempotencyKey()), keys.tenantLive(s.tenant())),
                List.of(s.id(), mode, SessionCodec.millis(s.leaseExpiresAt()), Long.toString(keyTtl)))
                .replaceWithVoid();
    }

    private List<String> sessionKeys(String sessionId) {
        return List.of(keys.session(sessionId), keys.dueOf(sessionId), keys.countsOf(sessionId),
                keys.heldOf(sessionId));
    }

    private Uni<Response> run(RedisScript script, List<String> scriptKeys, List<String> args) {
        return script.run(redis, scriptKeys, args);
    }

    private <T> Uni<T> guard(Uni<T> operation) {
        return operation.ifNoItem().after(timeout)
                .failWith(() -> new SessionException(SessionFailure.STORE_UNAVAILABLE,
                        "session store did not answer within " + timeout.toMillis() + " ms"))
                .onFailure(failure -> !(failure instanceof SessionException))
                // the client's message says what failed; the driver's own text (with Redis's address) is the cause
                .transform(failure -> new SessionException(SessionFailure.STORE_UNAVAILABLE,
                        "session store unavailable (" + failure.getClass().getSimpleName() + ")", null, failure))
                .onItemOrFailure().invoke((item, failure) -> reachability.observed(failure));
    }

    private static CleanupClaim claimOf(long token, Session session) {
        return token == 0 ? CleanupClaim.NONE : new CleanupClaim(token, session.pendingObligations());
    }

    private static String epochArg(OptionalLong expectedEpoch) {
        return expectedEpoch.isPresent() ? Long.toString(expectedEpoch.getAsLong()) : "";
    }

    private static SessionException refusal(String outcome, Response reply, OptionalLong expectedEpoch,
            SessionState target) {
        Session current = reply.size() > 1 ? SessionCodec.fromFields(fields(reply.get(reply.size() - 1))) : null;
        return switch (outcome) {
            case "NOT_FOUND" -> SessionException.notFound();
            case "TERMINAL" -> new SessionException(SessionFailure.NOT_LIVE,
                    "session is " + current.state() + "; nothing to renew", current);
            case "LEASE_EXPIRED" -> new SessionException(SessionFailure.NOT_LIVE,
                    "lease already expired; a lease is never revived", current);
            case "STALE_EPOCH" -> new SessionException(SessionFailure.STALE_EPOCH, "epoch "
                    + expectedEpoch.orElse(-1) + " is stale; the session is at epoch " + current.epoch(), current);
            case "ILLEGAL" -> new SessionException(
                    current.isTerminal() ? SessionFailure.NOT_LIVE : SessionFailure.ILLEGAL_TRANSITION,
                    "cannot move a " + current.state() + " session to " + target, current);
            default -> new SessionException(SessionFailure.STORE_UNAVAILABLE, "unexpected store reply " + outcome);
        };
    }

    private static Map<String, String> fields(Response flat) {
        Map<String, String> h = new HashMap<>();
        if (flat == null) {
            return h;
        }
        for (int i = 0; i + 1 < flat.size(); i += 2) {
            h.put(flat.get(i).toString(), flat.get(i + 1).toString());
        }
        return h;
    }
}
