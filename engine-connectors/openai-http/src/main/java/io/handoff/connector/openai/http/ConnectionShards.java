package io.handoff.connector.openai.http;

import io.netty.channel.EventLoop;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.impl.ContextInternal;
import io.vertx.core.impl.VertxInternal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.IntFunction;

/**
 * A connector's connections per endpoint, in lanes of one Vert.x event loop each, every lane spread over Vert.x
 * clients of at most {@link #CONNECTIONS_PER_SHARD} connections.
 *
 * <p><b>Why lanes.</b> A Vert.x connection lives on the event loop that opened it, and delivers each event to the
 * context of the exchange using it; one Vert.x pool hands any idle connection to any caller. So a leg started on one
 * event loop could stream over a connection of another, and every token then crossed two loops (a wake-up each way,
 * measured as one per token in the Generate benchmark's {@code --hops}). Here an exchange takes a place in the lane of
 * the event loop it starts on, and every exchange of a lane is started on that lane's loop: a lane's connections are
 * all opened on, and used from, its own loop. An exchange started off every loop (a test, a timer thread), or whose
 * own lane is full, takes a place in another lane and is started on that lane's loop: its events then arrive there,
 * which the legs' consumers accept (events of one stream may come from more than one thread).
 *
 * <p><b>Why shards.</b> Vert.x's pool for one endpoint looks at every connection it holds to choose one, and runs every
 * acquire and release of that endpoint one at a time: with thousands of streams open to one engine (each HTTP/1.1
 * stream holds a connection for its whole life) that scan was the gateway's largest cost, and its serial queue held
 * new legs back while cores were free. Small shards bound the scan and let shards work in parallel.
 *
 * <p>The connection limit per endpoint is split over the lanes, and each lane's share over its shards, so that every
 * shard's Vert.x pool together add up to the limit exactly. Exchanges fill a lane's shards in order, so that a light
 * load reuses the connections of the first shard rather than opening new ones in each; a shard counts its exchanges
 * in flight over every endpoint, so an endpoint may find a shard full that still has room for it, which costs a step
 * further and never a failure. When every shard is full the one least over its capacity (its own lane's first) takes
 * the exchange, and Vert.x queues it until one of its connections frees, as one pool would.
 */
final class ConnectionShards implements AutoCloseable {

    /** Connections per endpoint in one shard: small enough that scanning them costs little. */
    static final int CONNECTIONS_PER_SHARD = 64;

    /** The event loops' contexts, one per lane; a lane with no share of the limit has none. */
    private final ContextInternal[] loops;
    /** Each lane's shards are {@code firstShard[lane]} up to {@code firstShard[lane + 1]}. */
    private final int[] firstShard;
    private final int[] laneOf;
    private final HttpClient[] clients;
    private final int[] capacity;
    private final AtomicIntegerArray inFlight;

    /**
     * @param vertx          whose event loops make the lanes
     * @param maxConnections most connections per endpoint over every lane and shard
     * @param client         makes one shard's client, given how many connections per endpoint it may hold
     */
    ConnectionShards(Vertx vertx, int maxConnections, IntFunction<HttpClient> client) {
        List<ContextInternal> all = eventLoops(vertx);
        // a limit below the number of loops leaves the last loops without a lane: their exchanges go to the others
        this.loops = all.subList(0, Math.min(all.size(), Math.max(1, maxConnections))).toArray(ContextInternal[]::new);
        List<Integer> capacities = new ArrayList<>();
        this.firstShard = new int[loops.length + 1];
        int[] laneShare = split(maxConnections, loops.length);
        for (int lane = 0; lane < loops.length; lane++) {
            firstShard[lane] = capacities.size();
            int shards = Math.max(1, (laneShare[lane] + CONNECTIONS_PER_SHARD - 1) / CONNECTIONS_PER_SHARD);
            for (int share : split(laneShare[lane], shards)) {
                capacities.add(share);
            }
        }
        firstShard[loops.length] = capacities.size();
        this.capacity = capacities.stream().mapToInt(Integer::intValue).toArray();
        this.laneOf = new int[capacity.length];
        this.clients = new HttpClient[capacity.length];
        for (int lane = 0; lane < loops.length; lane++) {
            for (int i = firstShard[lane]; i < firstShard[lane + 1]; i++) {
                laneOf[i] = lane;
                clients[i] = client.apply(capacity[i]);
            }
        }
        this.inFlight = new AtomicIntegerArray(capacity.length);
    }

    private static List<ContextInternal> eventLoops(Vertx vertx) {
        VertxInternal internal = (VertxInternal) vertx;
        ClassLoader classLoader = Thread.currentThread().getContextClassLoader();
        List<ContextInternal> loops = new ArrayList<>();
        internal.getEventLoopGroup().forEach(executor -> loops.add(internal.createEventLoopContext(
                (EventLoop) executor, null, classLoader)));
        return loops;
    }

    /** {@code total} in {@code parts} shares differing by at most one, the remainder going to the first. */
    private static int[] split(int total, int parts) {
        int[] shares = new int[parts];
        for (int i = 0; i < parts; i++) {
            shares[i] = total / parts + (i < total % parts ? 1 : 0);
        }
        return shares;
    }

    int shards() {
        return clients.length;
    }

    int lanes() {
        return loops.length;
    }

    /** The lane a shard belongs to. */
    int lane(int shard) {
        return laneOf[shard];
    }

    /**
     * Takes a place in the first shard with room of the calling event loop's lane, else of the other lanes in order,
     * else in the shard least over its capacity; give it back with {@link #release}, and start the exchange with
     * {@link #execute}.
     */
    int acquire() {
        int home = homeLane();
        if (home >= 0) {
            int shard = tryAcquire(firstShard[home], firstShard[home + 1]);
            if (shard >= 0) {
                return shard;
            }
        }
        int shard = tryAcquire(0, clients.length);
        if (shard >= 0) {
            return shard;
        }
        int leastBusy = home >= 0 ? leastOver(firstShard[home], firstShard[home + 1], -1) : -1;
        leastBusy = leastOver(0, clients.length, leastBusy);
        inFlight.incrementAndGet(leastBusy);
        return leastBusy;
    }

    private int homeLane() {
        for (int lane = 0; lane < loops.length; lane++) {
            if (loops[lane].nettyEventLoop().inEventLoop()) {
                return lane;
            }
        }
        return -1;
    }

    private int tryAcquire(int from, int to) {
        for (int i = from; i < to; i++) {
            int count = inFlight.get(i);
            while (count < capacity[i]) {
                if (inFlight.compareAndSet(i, count, count + 1)) {
                    return i;
                }
                count = inFlight.get(i);
            }
        }
        return -1;
    }

    /** The shard from {@code from} to {@code to} least over its capacity, if less over than {@code best}. */
    private int leastOver(int from, int to, int best) {
        int bestOver = best < 0 ? Integer.MAX_VALUE : inFlight.get(best) - capacity[best];
        for (int i = from; i < to; i++) {
            int over = inFlight.get(i) - capacity[i];
            if (over < bestOver) {
                bestOver = over;
                best = i;
            }
        }
        return best;
    }

    HttpClient client(int shard) {
        return clients[shard];
    }

    /**
     * Runs {@code start} on the event loop of the shard's lane: at once when called there, else as a task of that
     * loop, so that the exchange's connection is opened on, and its events delivered to, that loop.
     */
    void execute(int shard, Runnable start) {
        ContextInternal loop = loops[laneOf[shard]];
        if (loop.nettyEventLoop().inEventLoop()) {
            start.run();
        } else {
            loop.duplicate().runOnContext(v -> start.run());
        }
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
