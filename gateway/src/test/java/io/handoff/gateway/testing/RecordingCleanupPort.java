package io.handoff.gateway.testing;

import io.handoff.connector.spi.DischargeResult;
import io.handoff.gateway.reaper.CleanupPort;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.smallrye.mutiny.Uni;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * A cleanup port that records every discharge (which replica, which session, which obligation) and answers what
 * the test scripted, RELEASED by default: the stand-in for the connectors where a test drives the store alone.
 */
public class RecordingCleanupPort implements CleanupPort {

    public record Call(String replica, String sessionId, String obligationId) {
    }

    private final String replica;
    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private final Map<String, Function<CleanupObligation, Uni<DischargeResult>>> scripted = new ConcurrentHashMap<>();
    private volatile Function<CleanupObligation, Uni<DischargeResult>> answer = o -> Uni.createFrom().item(DischargeResult.released());

    public RecordingCleanupPort() {
        this("quarkus");
    }

    public RecordingCleanupPort(String replica) {
        this.replica = replica;
    }

    @Override
    public Uni<DischargeResult> discharge(Session session, CleanupObligation obligation) {
        calls.add(new Call(replica, session.id(), obligation.id()));
        return scripted.getOrDefault(obligation.id(), answer).apply(obligation);
    }

    public void answerAlways(Function<CleanupObligation, Uni<DischargeResult>> answer) {
        this.answer = answer;
    }

    public void answerFor(String obligationId, Function<CleanupObligation, Uni<DischargeResult>> answer) {
        scripted.put(obligationId, answer);
    }

    public List<Call> calls() {
        return List.copyOf(calls);
    }

    public List<Call> callsFor(String sessionId) {
        return calls.stream().filter(c -> c.sessionId().equals(sessionId)).toList();
    }

    public void reset() {
        calls.clear();
        scripted.clear();
        answer = o -> Uni.createFrom().item(DischargeResult.released());
    }
}
