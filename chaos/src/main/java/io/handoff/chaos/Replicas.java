package io.handoff.chaos;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The gateway replicas, one per slot. A slot is UP (taking load), PAUSED (SIGSTOP: clients still reach it and wait),
 * or RESTARTING (killed, a new process with a new replica id on its way). Clients pick among the slots that are UP or
 * PAUSED, as a load balancer that has not noticed yet would.
 */
final class Replicas {

    enum SlotState { UP, PAUSED, RESTARTING }

    /** What a client talks to: one replica's HTTP base URL and gRPC channel. */
    record Target(String replicaId, String baseUrl, ManagedChannel channel) {
    }

    private static final class Slot {
        GatewayReplica replica;
        ManagedChannel channel;
        SlotState state = SlotState.RESTARTING;
    }

    private final Path jar;
    private final Path dir;
    private final Map<String, String> config;
    private final Map<String, String> environment;
    private final List<Slot> slots = new ArrayList<>();
    private final AtomicInteger generation = new AtomicInteger();
    private final History history;
    private final ExecutorService starter = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "chaos-replica-start");
        t.setDaemon(true);
        return t;
    });

    Replicas(int count, Path jar, Path dir, Map<String, String> config, Map<String, String> environment,
            History history) {
        this.jar = jar;
        this.dir = dir;
        this.config = config;
        this.environment = environment;
        this.history = history;
        for (int i = 0; i < count; i++) {
            slots.add(new Slot());
        }
    }

    /** Starts every slot in parallel and waits until each listens. */
    void startAll() throws Exception {
        List<Future<?>> started = new ArrayList<>();
        for (int i = 0; i < slots.size(); i++) {
            int slot = i;
            started.add(starter.submit(() -> startSlot(slot)));
        }
        for (Future<?> f : started) {
            f.get();
        }
    }

    private void startSlot(int slot) {
        String id = "r" + slot + "-g" + generation.incrementAndGet();
        GatewayReplica r = GatewayReplica.start(id, jar, dir, config, environment);
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", r.grpcPort()).usePlaintext().build();
        synchronized (this) {
            Slot s = slots.get(slot);
            s.replica = r;
            s.channel = ch;
            s.state = SlotState.UP;
        }
        history.event("replica-up", id + " port " + r.port() + ", gRPC " + r.grpcPort());
    }

    /** A random replica clients may reach (UP or PAUSED), if any. */
    synchronized Optional<Target> pick() {
        List<Slot> reachable = new ArrayList<>();
        for (Slot s : slots) {
            if (s.state != SlotState.RESTARTING) {
                reachable.add(s);
            }
        }
        if (reachable.isEmpty()) {
            return Optional.empty();
        }
        Slot s = reachable.get(ThreadLocalRandom.current().nextInt(reachable.size()));
        return Optional.of(new Target(s.replica.id(), s.replica.baseUrl(), s.channel));
    }

    /** A replica that is UP (for the final reads), waiting for one if none is. */
    Target anyUp() {
        while (true) {
            synchronized (this) {
                for (Slot s : slots) {
                    if (s.state == SlotState.UP) {
                        return new Target(s.replica.id(), s.replica.baseUrl(), s.channel);
                    }
                }
            }
            Sleep.millis(100);
        }
    }

    private synchronized int countUp() {
        return (int) slots.stream().filter(s -> s.state == SlotState.UP).count();
    }

    /**
     * kill -9 of a random UP replica, and at once a new process with a new replica id in its slot. Only while at
     * least two are UP, so that one replica always takes the load while another starts.
     *
     * @return the killed replica's id, or empty when none could be killed now
     */
    Optional<String> killOne() {
        int index = takeVictim();
        if (index < 0) {
            return Optional.empty();
        }
        Slot victim = slots.get(index);
        String id = victim.replica.id();
        victim.replica.process().kill9();
        victim.channel.shutdownNow();
        history.event("replica-killed", id);
        starter.submit(() -> {
            try {
                startSlot(index);
            } catch (RuntimeException e) {
                history.event("replica-start-failed", e.getMessage());
            }
        });
        return Optional.of(id);
    }

    /**
     * A random UP slot, marked RESTARTING, or -1 while fewer than two are UP (one replica always takes the load
     * while another starts).
     */
    private synchronized int takeVictim() {
        if (countUp() < 2) {
            return -1;
        }
        List<Integer> up = new ArrayList<>();
        for (int i = 0; i < slots.size(); i++) {
            if (slots.get(i).state == SlotState.UP) {
                up.add(i);
            }
        }
        int index = up.get(ThreadLocalRandom.current().nextInt(up.size()));
        slots.get(index).state = SlotState.RESTARTING;
        return index;
    }

    /** A replica stopped with SIGTERM: when (history time), and how long its process took to exit. */
    record Termination(String replicaId, long signalledAtMs, long exitedAtMs, boolean overran) {
    }

    private final List<Termination> terminations = new CopyOnWriteArrayList<>();

    /**
     * SIGTERM to a random UP replica, as Kubernetes stops a pod: clients stop picking it at once (its readiness is
     * down), the calls it has go on over the open channel; once its process has exited (killed after
     * {@code exitWithinMs} if it overran), a new process with a new replica id takes its slot. The wait and the
     * restart run in the background. {@code beforeSignal} is given the replica first (to start calls that will be in
     * flight when the signal comes).
     *
     * @return the terminated replica's id, or empty when none could be stopped now
     */
    Optional<String> terminateOne(long exitWithinMs, Consumer<Target> beforeSignal) {
        int index = takeVictim();
        if (index < 0) {
            return Optional.empty();
        }
        Slot victim = slots.get(index);
        GatewayReplica replica = victim.replica;
        ManagedChannel channel = victim.channel;
        beforeSignal.accept(new Target(replica.id(), replica.baseUrl(), channel));
        long signalled = history.now();
        replica.process().terminate();
        history.event("replica-terminated", replica.id() + " (SIGTERM)");
        starter.submit(() -> {
            boolean exited = replica.process().awaitExit(exitWithinMs);
            if (!exited) {
                replica.process().kill9();
            }
            long exitedAt = history.now();
            terminations.add(new Termination(replica.id(), signalled, exitedAt, !exited));
            history.event(exited ? "replica-exited" : "replica-term-overran", replica.id() + " after "
                    + (exitedAt - signalled) + " ms");
            channel.shutdown();
            try {
                startSlot(index);
            } catch (RuntimeException e) {
                history.event("replica-start-failed", e.getMessage());
            }
        });
        return Optional.of(replica.id());
    }

    List<Termination> terminations() {
        return List.copyOf(terminations);
    }

    /** What runs around a replica's pause: before its SIGSTOP, while it is stopped, after its SIGCONT. */
    interface PauseHooks {
        void beforePause(Target victim);

        void whilePaused(Target victim);

        void afterResume(Target victim);
    }

    /**
     * SIGSTOP of a random UP replica for {@code millis}, then SIGCONT (blocks for that long, and for the hooks). The
     * victim is taken out of the UP replicas before {@code hooks.beforePause} runs, so no kill takes it meanwhile.
     */
    Optional<String> pauseOne(long millis, PauseHooks hooks) {
        Slot victim;
        synchronized (this) {
            if (countUp() < 2) {
                return Optional.empty();
            }
            List<Slot> up = slots.stream().filter(s -> s.state == SlotState.UP).toList();
            victim = up.get(ThreadLocalRandom.current().nextInt(up.size()));
            victim.state = SlotState.PAUSED;
        }
        String id = victim.replica.id();
        Target target = new Target(id, victim.replica.baseUrl(), victim.channel);
        hooks.beforePause(target);
        victim.replica.process().pause();
        history.event("replica-paused", id + " for " + millis + " ms");
        long resumeAt = System.currentTimeMillis() + millis;
        try {
            hooks.whilePaused(target);
            Sleep.millis(Math.max(0, resumeAt - System.currentTimeMillis()));
        } finally {
            victim.replica.process().resume();
        }
        synchronized (this) {
            victim.state = SlotState.UP;
        }
        history.event("replica-resumed", id);
        hooks.afterResume(target);
        return Optional.of(id);
    }

    /** Waits until every slot is UP again (after the faults stopped). */
    void awaitAllUp(long timeoutMs) {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (countUp() < slots.size()) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("replicas did not all come back within " + timeoutMs + " ms");
            }
            Sleep.millis(100);
        }
    }

    int generations() {
        return generation.get();
    }

    void stopAll() {
        starter.shutdownNow();
        List<Slot> all;
        synchronized (this) {
            all = new ArrayList<>(slots);
        }
        for (Slot s : all) {
            if (s.replica != null) {
                s.replica.process().resume();
                s.replica.process().stop();
            }
            if (s.channel != null) {
                s.channel.shutdownNow();
            }
        }
    }
}
