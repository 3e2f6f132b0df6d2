package io.handoff.chaos;

import io.handoff.chaos.ChaosSettings.Fault;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The faults, on two timers while the load runs: a kill -9 of a replica every {@code killEveryMs} (restarted at once
 * with a new replica id), and in turn every {@code faultEveryMs} the others: a replica stopped (SIGSTOP) for longer
 * than a lease (with a probe of the stale write it makes when it wakes), Redis emptied under load (FLUSHALL), Redis
 * killed and restarted (from its append-only file, or empty without it), Redis stopped for a moment, an engine crashed mid-stream (it comes back
 * with a new identity), a replica stopped with SIGTERM (graceful: it finishes what runs, then a new one starts), an
 * engine answering late or cutting its next streams for a while. Every fault goes in the history.
 */
final class FaultSchedule {

    private final ChaosSettings settings;
    private final Replicas replicas;
    private final RedisStore redis;
    private final SimulatorFleet fleet;
    private final HttpCalls http;
    private final History history;
    private final GenerateCalls generate;
    private final StaleEpochProbe staleEpochProbe;
    private final Map<Fault, AtomicInteger> injected = new ConcurrentHashMap<>();
    private final AtomicInteger clusterFaultsFailed = new AtomicInteger();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running;

    FaultSchedule(ChaosSettings settings, Replicas replicas, RedisStore redis, SimulatorFleet fleet, HttpCalls http,
            History history) {
        this.settings = settings;
        this.replicas = replicas;
        this.redis = redis;
        this.fleet = fleet;
        this.http = http;
        this.history = history;
        this.generate = new GenerateCalls(history);
        this.staleEpochProbe = new StaleEpochProbe(settings, replicas, fleet, http, history);
        for (Fault f : Fault.values()) {
            injected.put(f, new AtomicInteger());
        }
    }

    void start() {
        running = true;
        if (settings.faults().contains(Fault.REPLICA_KILL)) {
            threads.add(thread("chaos-killer", settings.killEveryMs(), this::killReplica));
        }
        List<Fault> others = new ArrayList<>();
        for (Fault f : List.of(Fault.REPLICA_PAUSE, Fault.REDIS_WIPE, Fault.REDIS_FAILOVER,
                Fault.REDIS_MASTER_KILL, Fault.REPLICA_TERM, Fault.REDIS_KILL_EMPTY, Fault.ENGINE_SLOW,
                Fault.REDIS_KILL, Fault.ENGINE_CRASH, Fault.ENGINE_CUT, Fault.REDIS_PAUSE)) {
            if (settings.faults().contains(f)) {
                others.add(f);
            }
        }
        if (!others.isEmpty()) {
            AtomicInteger turn = new AtomicInteger();
            threads.add(thread("chaos-faults", settings.faultEveryMs(),
                    () -> inject(others.get(turn.getAndIncrement() % others.size()))));
        }
        threads.forEach(Thread::start);
    }

    /** Stops injecting and waits until the fault in progress has been undone (a paused process resumed). */
    void stop() throws InterruptedException {
        running = false;
        for (Thread t : threads) {
            t.join(); // not interrupted: a fault in progress is undone (a stopped process resumed) before it ends
        }
    }

    Map<Fault, AtomicInteger> injected() {
        return injected;
    }

    StaleEpochProbe staleEpochProbe() {
        return staleEpochProbe;
    }

    /** Redis Cluster faults that could not run or after which the cluster did not heal within its time. */
    int clusterFaultsFailed() {
        return clusterFaultsFailed.get();
    }

    private Thread thread(String name, long periodMs, Runnable fault) {
        Thread t = new Thread(() -> {
            while (running) {
                long until = System.currentTimeMillis() + periodMs;
                while (running && System.currentTimeMillis() < until) {
                    Sleep.millis(Math.min(100, Math.max(1, until - System.currentTimeMillis())));
                }
                if (!running) {
                    return;
                }
                try {
                    fault.run();
                } catch (RuntimeException e) {
                    history.event("fault-failed", name + ": " + e);
                }
            }
        }, name);
        t.setDaemon(true);
        return t;
    }

    /** How long an engine stays slow, or cuts streams, before its faults are cleared. */
    private static final long ENGINE_FAULT_MS = 2000;

    /** Sets faults on a random engine for {@code millis}, then clears them (blocks for that long). */
    private void engineFaults(Fault f, String json, String what, long millis) {
        List<SimulatorFleet.Engine> engines = fleet.engines();
        SimulatorFleet.Engine e = engines.get(ThreadLocalRandom.current().nextInt(engines.size()));
        try {
            http.simFaults(e.url(), json);
            history.event("engine-" + (f == Fault.ENGINE_SLOW ? "slow" : "cut"), e.name() + " " + what + ": " + json);
            injected.get(f).incrementAndGet();
            Sleep.millis(millis);
        } catch (IOException ex) {
            history.event("fault-failed", f + " " + e.name() + ": " + ex.getMessage());
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        } finally {
            try {
                http.simFaults(e.url(), null);
            } catch (IOException ex) {
                history.event("fault-failed", "clearing " + e.name() + "'s faults: " + ex.getMessage());
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Two streams of about a second each (150 tokens at the fleet's 5 ms), over gRPC and HTTP, started on a replica
     * about to get SIGTERM, so that every stop has work in flight to finish within its grace. They run on their own
     * threads and go in the history as any call.
     */
    private void longStreams(Replicas.Target t) {
        String id = UUID.randomUUID().toString();
        CountDownLatch streaming = new CountDownLatch(1);
        Thread grpc = new Thread(() -> generate.generate(t, GenerateCalls.request("term-grpc-" + id, "chaos-trtllm", 150,
                null), "generate-during-stop", null, null, 0, 15_000, streaming::countDown), "chaos-term-grpc");
        Thread stream = new Thread(() -> http.completion(t, "term-http-" + id, "chaos-sglang", 150, true, 15_000, 0),
                "chaos-term-http");
        grpc.setDaemon(true);
        stream.setDaemon(true);
        grpc.start();
        stream.start();
        try {
            // admitted and streaming before the signal (a Redis pause may hold the admission a while)
            streaming.await(5, TimeUnit.SECONDS);
            Sleep.millis(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A Redis Cluster fault: counted when it ran and the cluster healed, else recorded as failed. */
    private void clusterFault(Fault f, Runnable fault) {
        try {
            fault.run();
            injected.get(f).incrementAndGet();
        } catch (RuntimeException e) {
            clusterFaultsFailed.incrementAndGet();
            history.event("fault-failed", f.option() + ": " + e.getMessage());
        }
    }

    private void killReplica() {
        replicas.killOne().ifPresent(id -> injected.get(Fault.REPLICA_KILL).incrementAndGet());
    }

    private void inject(Fault f) {
        switch (f) {
            case REPLICA_PAUSE -> replicas.pauseOne(settings.pauseMs(), staleEpochProbe)
                    .ifPresent(id -> injected.get(f).incrementAndGet());
            case REPLICA_TERM -> {
                // a kill's restart may leave one replica up for a while: wait for a second one, as a rollout does
                Optional<String> stopped = Optional.empty();
                long until = System.currentTimeMillis() + 15_000;
                while (running && stopped.isEmpty() && System.currentTimeMillis() < until) {
                    stopped = replicas.terminateOne(settings.termExitWithinMs(), this::longStreams);
                    if (stopped.isEmpty()) {
                        Sleep.millis(200);
                    }
                }
                stopped.ifPresent(id -> injected.get(f).incrementAndGet());
            }
            case REDIS_KILL -> {
                history.event("redis-killed", "kill -9, restarted at once");
                RedisNode node = (RedisNode) redis; // a fault of one redis-server only (ChaosSettings checks)
                node.kill9();
                node.restart();
                history.event("redis-up", "");
                injected.get(f).incrementAndGet();
            }
            case REDIS_KILL_EMPTY -> {
                // as a wipe, and the process too: every session, key, cleanup and script gone, the port refused
                // until the new process listens; recorded as a loss of the store's writes from the kill to the restart
                long start = System.nanoTime();
                history.event("redis-killed", "kill -9, its append-only file removed, restarted empty");
                try {
                    ((RedisNode) redis).killAndRestartEmpty();
                } catch (IOException e) {
                    history.event("fault-failed", "kill-empty: " + e.getMessage());
                    return;
                } finally {
                    history.storeLoss(History.KILL_EMPTY, start, System.nanoTime());
                }
                history.event("redis-up", "empty");
                injected.get(f).incrementAndGet();
            }
            case REDIS_WIPE -> {
                long start = System.nanoTime();
                try {
                    redis.wipe();
                } catch (IOException e) {
                    history.event("fault-failed", "wipe: " + e.getMessage());
                    return;
                } finally {
                    history.storeLoss(History.WIPE, start, System.nanoTime());
                }
                history.event("redis-wiped", "FLUSHALL and SCRIPT FLUSH: every session, key and script gone");
                injected.get(f).incrementAndGet();
            }
            case REDIS_PAUSE -> {
                history.event("redis-paused", settings.redisPauseMs() + " ms");
                RedisNode node = (RedisNode) redis;
                node.pause();
                try {
                    Thread.sleep(settings.redisPauseMs());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    node.resume();
                }
                history.event("redis-resumed", "");
                injected.get(f).incrementAndGet();
            }
            case REDIS_FAILOVER -> clusterFault(f, () -> {
                history.event("redis-failover", "CLUSTER FAILOVER on a replica");
                history.event("redis-failed-over", ((RedisClusterNodes) redis).failOver());
            });
            case REDIS_MASTER_KILL -> clusterFault(f, () -> {
                history.event("redis-master-killed", "kill -9 of a master");
                RedisClusterNodes.MasterKill kill = ((RedisClusterNodes) redis).killMaster();
                // what the master had acknowledged but not replicated is lost at the kill, taken over at promotion
                history.storeLoss(History.MASTER_KILL, kill.killedNs(), kill.promotedNs());
                history.event("redis-master-replaced", kill.promoted() + " took over from " + kill.killed() + " in "
                        + (kill.promotedNs() - kill.killedNs()) / 1_000_000 + " ms; the killed node rejoined as its"
                        + " replica");
            });
            case ENGINE_CRASH -> {
                List<SimulatorFleet.Engine> engines = fleet.engines();
                SimulatorFleet.Engine e = engines.get(ThreadLocalRandom.current().nextInt(engines.size()));
                try {
                    http.simCrash(e.url(), 300);
                    history.event("engine-crashed", e.name() + ", back in 300 ms with a new identity");
                    injected.get(f).incrementAndGet();
                } catch (IOException ex) {
                    history.event("fault-failed", "crash " + e.name() + ": " + ex.getMessage());
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }
            // answers late: every inference request waits before the engine looks at it, for a while
            case ENGINE_SLOW -> engineFaults(f, "{\"latency_ms\":" + (200 + ThreadLocalRandom.current().nextInt(600))
                    + "}", "answers late", ENGINE_FAULT_MS);
            // cuts streams: the next few stop after 1 to 3 events, the connection dropped with no end
            case ENGINE_CUT -> engineFaults(f, "{\"cut_after_chunks\":" + (1 + ThreadLocalRandom.current().nextInt(3))
                    + ",\"cut_count\":3}", "cuts its next 3 streams", ENGINE_FAULT_MS);
            default -> throw new IllegalArgumentException(f.name());
        }
    }
}
