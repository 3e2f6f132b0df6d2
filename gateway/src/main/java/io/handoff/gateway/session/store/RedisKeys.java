package io.handoff.gateway.session.store;

import io.handoff.gateway.session.SessionIds;

/**
 * The Redis key layout. Two kinds of hash tag keep every script inside one Cluster slot:
 * <ul>
 * <li>{@code {s<bucket>}}: a session's record, plus its bucket's due index and state counts. The bucket is the
 * first two hex digits of the session id, so one script can change a session and its index entry together.</li>
 * <li>{@code {t<tenant>}}: a tenant's idempotency keys, its live-session index and its rate limits.</li>
 * </ul>
 */
final class RedisKeys {

    private final String prefix;

    /**
     * @throws IllegalArgumentException when the prefix holds a brace: Redis Cluster hashes only what stands
     *         between the first braces of a key, so a prefix such as {@code app{prod}} would put every key of the
     *         deployment in one slot (one master), and {@code {}} would make a script's keys cross slots
     */
    RedisKeys(String prefix) {
        if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("handoff.store.redis.key-prefix may not hold '{' or '}' (they would"
                    + " choose the Redis Cluster hash slot of every key): " + prefix);
        }
        this.prefix = prefix;
    }

    String session(String sessionId) {
        return prefix + ":{s" + sessionId.substring(0, 2) + "}:session:" + sessionId;
    }

    String due(int bucket) {
        return prefix + ":{s" + SessionIds.bucketTag(bucket) + "}:due";
    }

    String dueOf(String sessionId) {
        return due(SessionIds.bucketOf(sessionId));
    }

    String counts(int bucket) {
        return prefix + ":{s" + SessionIds.bucketTag(bucket) + "}:counts";
    }

    String countsOf(String sessionId) {
        return counts(SessionIds.bucketOf(sessionId));
    }

    /** Terminal sessions of a bucket that an engine may still hold KV for, scored by until when (see lib.lua). */
    String held(int bucket) {
        return prefix + ":{s" + SessionIds.bucketTag(bucket) + "}:held";
    }

    String heldOf(String sessionId) {
        return held(SessionIds.bucketOf(sessionId));
    }

    /** The deployment's drain mark: present while the deployment drains, shared by every replica. */
    String drain() {
        return prefix + ":drain";
    }

    String idempotency(String tenant, String key) {
        return prefix + ":{t" + tenant + "}:idem:" + key;
    }

    /** One rate limit of a tenant (its GCRA state), in the tenant's slot with the tenant's other keys. */
    String rateLimit(String tenant, String limit) {
        return prefix + ":{t" + tenant + "}:rate:" + limit;
    }

    String tenantLive(String tenant) {
        return prefix + ":{t" + tenant + "}:live";
    }
}
