package io.handoff.benchmarks;

import com.google.protobuf.Duration;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.handoff.openengine.v1.ReleaseKvSessionResponse;
import io.handoff.openengine.v1.RenewKvSessionRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * KV session lifecycles over gRPC: allocate, then renew, then release, each waiting for the one before. Sequential
 * ones use the blocking stub; concurrent ones chain async calls whose callbacks run on the transport's own threads
 * (direct executor), so no thread is parked per lifecycle.
 */
final class GrpcLifecycles implements AutoCloseable {

    static final String ALLOCATE = "AllocateKvSession";
    static final String RENEW = "RenewKvSession";
    static final String RELEASE = "ReleaseKvSession";

    private static final Duration LEASE = Duration.newBuilder().setSeconds(30).build();

    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<OpenEngineKvGrpc.OpenEngineKvStub> async = new ArrayList<>();
    private final OpenEngineKvGrpc.OpenEngineKvBlockingStub blocking;
    private final long deadlineMs;
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicLong sequence = new AtomicLong();

    // java.time.Duration spelled out: the imported Duration is protobuf's, for the lease
    GrpcLifecycles(String target, int channelCount, java.time.Duration deadline) {
        this.deadlineMs = deadline.toMillis();
        for (int i = 0; i < channelCount; i++) {
            ManagedChannel channel = NettyChannelBuilder.forTarget(target).usePlaintext().directExecutor()
                    .build();
            channels.add(channel);
            async.add(OpenEngineKvGrpc.newStub(channel));
        }
        this.blocking = OpenEngineKvGrpc.newBlockingStub(channels.get(0));
    }

    private AllocateKvSessionRequest nextAllocate() {
        String n = run + "-" + sequence.incrementAndGet();
        return AllocateKvSessionRequest.newBuilder().setRequestId("bench-req-" + n).setModel("bench-model")
                .setIdempotencyKey("bench-key-" + n).build();
    }

    private static RenewKvSessionRequest renewOf(String id) {
        return RenewKvSessionRequest.newBuilder().setSessionId(id).setLease(LEASE).build();
    }

    private static ReleaseKvSessionRequest releaseOf(String id) {
        return ReleaseKvSessionRequest.newBuilder().setSessionId(id).setReason("benchmark").build();
    }

    /** One lifecycle with the blocking stub, one RPC in flight. Answers false (and logs) on an error. */
    boolean sequential(Recorders recorders, ErrorLog errors) {
        String op = ALLOCATE;
        try {
            long t0 = System.nanoTime();
            KvSession session = blocking.withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS)
                    .allocateKvSession(nextAllocate());
            long t1 = System.nanoTime();
            String id = session.getRef().getSessionId();
            op = RENEW;
            blocking.withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS).renewKvSession(renewOf(id));
            long t2 = System.nanoTime();
            op = RELEASE;
            ReleaseKvSessionResponse released = blocking.withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS)
                    .releaseKvSession(releaseOf(id));
            long t3 = System.nanoTime();
            if (released.getAlreadyTerminal()) {
                throw new IllegalStateException("session " + id + " was already terminal");
            }
            if (recorders != null) {
                recorders.allocate.record(t1 - t0);
                recorders.renew.record(t2 - t1);
                recorders.release.record(t3 - t2);
            }
            return true;
        } catch (RuntimeException e) {
            errors.add(op, e);
            return false;
        }
    }

    /**
     * One GetKvSession for a malformed session id, which the gateway refuses with NOT_FOUND before touching the
     * store: the floor of a gRPC round trip through the gateway, without Redis. Answers nanoseconds, or -1 (logged).
     */
    long grpcFloor(ErrorLog errors) {
        long t0 = System.nanoTime();
        try {
            blocking.withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS)
                    .getKvSession(GetKvSessionRequest.newBuilder().setSessionId("no-such-session").build());
            errors.add("GetKvSession", new IllegalStateException("a malformed session id was found"));
            return -1;
        } catch (StatusRuntimeException e) {
            long elapsed = System.nanoTime() - t0;
            if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                return elapsed;
            }
            errors.add("GetKvSession", e);
            return -1;
        }
    }

    /** Latency recorders of the three RPCs. */
    static final class Recorders {
        final LatencyRecorder allocate = new LatencyRecorder(ALLOCATE);
        final LatencyRecorder renew = new LatencyRecorder(RENEW);
        final LatencyRecorder release = new LatencyRecorder(RELEASE);
    }

    /**
     * {@code concurrency} lifecycles in flight until stopped. RPCs completing while {@link #recording} is on are
     * recorded, and lifecycles whose release completes then are counted.
     */
    final class Load extends AbstractClosedLoop {

        private final Recorders recorders;
        private final ErrorLog errors;

        Load(int concurrency, Recorders recorders, ErrorLog errors) {
            super(concurrency);
            this.recorders = recorders;
            this.errors = errors;
        }

        @Override
        void startSlot(int slot) {
            next(async.get(slot % async.size()));
        }

        private void next(OpenEngineKvGrpc.OpenEngineKvStub stub) {
            if (!continuing()) {
                return;
            }
            long t0 = System.nanoTime();
            stub.withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS).allocateKvSession(nextAllocate(),
                    observer(stub, ALLOCATE, session -> {
                        long t1 = System.nanoTime();
                        record(recorders.allocate, t1 - t0);
                        renew(stub, session.getRef().getSessionId(), t1);
                    }));
        }

        private void renew(OpenEngineKvGrpc.OpenEngineKvStub stub, String id, long t1) {
            stub.withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS).renewKvSession(renewOf(id),
                    observer(stub, RENEW, renewed -> {
                        long t2 = System.nanoTime();
                        record(recorders.renew, t2 - t1);
                        release(stub, id, t2);
                    }));
        }

        private void release(OpenEngineKvGrpc.OpenEngineKvStub stub, String id, long t2) {
            stub.withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS).releaseKvSession(releaseOf(id),
                    observer(stub, RELEASE, released -> {
                        record(recorders.release, System.nanoTime() - t2);
                        if (released.getAlreadyTerminal()) {
                            errors.add(RELEASE, new IllegalStateException("session " + id
                                    + " was already terminal"));
                        } else {
                            countCompleted();
                        }
                        next(stub);
                    }));
        }

        private void record(LatencyRecorder recorder, long nanos) {
            if (recording()) {
                recorder.record(nanos);
            }
        }

        private <T> StreamObserver<T> observer(OpenEngineKvGrpc.OpenEngineKvStub stub, String op,
                Consumer<T> then) {
            return new StreamObserver<>() {
                private T value;

                @Override
                public void onNext(T v) {
                    value = v;
                }

                @Override
                public void onError(Throwable t) {
                    errors.add(op, t);
                    next(stub);
                }

                @Override
                public void onCompleted() {
                    try {
                        then.accept(value);
                    } catch (RuntimeException e) {
                        errors.add(op, e);
                        next(stub);
                    }
                }
            };
        }
    }

    @Override
    public void close() throws InterruptedException {
        for (ManagedChannel channel : channels) {
            channel.shutdown();
        }
        for (ManagedChannel channel : channels) {
            if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
                channel.shutdownNow();
            }
        }
    }
}
