package io.handoff.connector.openai.http;

import io.vertx.core.http.HttpClient;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.IntFunction;

/**
 * A connector's connections per endpoint, spread over several Vert.x clients of at most {@link #CONNECTIONS_PER_SHARD}
 * connections each. Vert.x's pool for one endpoint looks at every connection it holds to choose one, and runs every
 * acquire and release of that endpoint one at a time: with thousands of streams open to one engine (each HTTP/1.1
 * stream holds a connection for its whole life) that scan was the gateway's largest cost, and its serial queue held
 * new legs back while cores were free. Small shards bound the scan and let shards work in parallel.
 *
 * <p>Exchanges fill the shards in order, so that a light load reuses the connections of the first shard rather than
 * opening new ones in each; a shard counts its exchanges in flight over every endpoint, so an endpoint may find a shard
 * full that still has room for it, which costs a step further and never a failure. When every shard is full the one
 * least over its capacity takes the exchange, and Vert.x queues it until one of its connections frees, as one pool would.
 */
final class ConnectionShards implements AutoCloseable {

    /** Connections per endpoint in one shard: small enough that scanning them costs little. */
    static final int CONNECTIONS_PER_SHARD = 64;

    private final HttpClient[] clients;
    private final int[] capacity;
    private final AtomicIntegerArray inFlight;

    /**
     * @param maxConnections most connections per endpoint over every shard
     * @param client         makes one shard's client, given how many connections per endpoint it may hold
     */
    ConnectionShards(int maxConnections, IntFunction<HttpClient> client) {
        int shards = Math.max(1, (maxConnections + CONNECTIONS_PER_SHARD - 1) / CONNECTIONS_PER_SHARD);
        this.capacity = new int[shards];
        this.clients = new HttpClient[shards];
        for (int i = 0; i < shards; i++) {
            // the remainder goes one by one to the first shards, so that the shards add up to the limit exactly
            capacity[i] = maxConnections / shards + (i < maxConnections % shards ? 1 : 0);
            clients[i] = client.apply(capacity[i]);
        }
        this.inFlight = new AtomicIntegerArray(shards);
    }

    int shards() {
        return clients.length;
    }

    /** Takes a place in the first shard with room (or the least busy one); give it back with {@link #release}. */
    int acquire() {
        int leastBusy = 0;
        int leastCount = Integer.MAX_VALUE;
        for (int i = 0; i < clients.length; i++) {
            int count = inFlight.get(i);
            while (count < capacity[i]) {
                if (inFlight.compareAndSet(i, count, count + 1)) {
                    return i;
                }
                count = inFlight.get(i);
            }
            if (count - capacity[i] < leastCount) {
                leastCount = count - capacity[i];
                leastBusy = i;
            }
        }
        inFlight.incrementAndGet(leastBusy);
        return leastBusy;
    }

    HttpClient client(int shard) {
        return clients[shard];
    }

    void release(int shard) {
        inFlight.decrementAndGet(shard);
    }

    /** Most connections per endpoint this shard may hold. */
    int capacity(int shard) {
        return capacity[shard];
    }

    /** Exchanges in flight in this shard (those started and not yet released). */
    int inFlight(int shard) {
        return inFlight.get(shard);
    }

    @Override
    public void close() {
        for (HttpClient c : clients) {
            c.close();
        }
    }
}
