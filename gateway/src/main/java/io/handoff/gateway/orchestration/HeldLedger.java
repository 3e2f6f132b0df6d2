package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.HeldKv;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionService;
import io.smallrye.mutiny.Uni;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * What the engines hold for one run's session, from the moment a leg reports it until it is in the store. A hold is
 * noted the instant it is known, before any asynchronous step, so that no ending (a cancel while the prefill's
 * answer is being recorded, a leg cancelled before its answer arrived) can lose it: what is not yet recorded when
 * the session ends is written in the same step as the end ({@link #closing}); what is noted after the end is
 * recorded at once on the ended session, whose open obligations the reaper then discharges.
 *
 * <p>It also knows whether the consumer pulled the KV (the decode produced output): holds an engine frees on that
 * pull are then written as discharged when the session ends, instead of being counted until the engine's timer. And
 * it knows the holds a leg's native abort released (the abort was the very call their discharge makes): those too
 * are written as discharged with the end, so that no hold is discharged twice.
 */
final class HeldLedger {

    private static final Logger LOG = Logger.getLogger(HeldLedger.class);

    private final SessionService sessions;
    private final String tenant;
    private final String sessionId;
    private final String route;
    private final String requestId;
    /** By obligation id: the obligation as the run knows it, and whether the store has it. */
    private final Map<String, Entry> entries = new LinkedHashMap<>();
    /** What each leg's completed native abort released, as the connector knows it; also for holds noted later. */
    private final List<Predicate<HeldKv>> abortsCompleted = new ArrayList<>();
    private boolean closed;
    private volatile boolean pulled;
    private Uni<Void> writing = Uni.createFrom().voidItem();

    HeldLedger(SessionService sessions, String tenant, Session session, String route, String requestId) {
        this.sessions = sessions;
        this.tenant = tenant;
        this.sessionId = session.id();
        this.route = route;
        this.requestId = requestId;
        // a participant's decode: the holds its prefill leg recorded are the ones this decode pulls
        for (CleanupObligation o : session.obligations()) {
            if (o.isPending()) {
                entries.put(o.id(), new Entry(o, null, true, false));
            }
        }
    }

    /**
     * Notes what a leg reports as held. Before the session's end it is kept for {@link #record} or the end; after the
     * end it is recorded on the ended session right away.
     */
    void note(List<HeldKv> held) {
        List<CleanupObligation> late = new ArrayList<>();
        synchronized (this) {
            for (HeldKv h : held) {
                CleanupObligation o = CleanupObligation.pending(h.id(), route, h.endpoint().name(), h.resource(),
                        h.handle(), h.heldUntil(), h.freedByPull());
                boolean released = abortsCompleted.stream().anyMatch(abort -> abort.test(h));
                entries.put(o.id(), new Entry(o, h, false, released));
                if (closed) {
                    late.add(released ? o.releasedByAbort() : o);
                }
            }
        }
        late.forEach(o -> write(o).subscribe().with(x -> { }, f -> { }));
    }

    /** The noted holds the store does not have yet, to be written with the session's next move. */
    synchronized List<CleanupObligation> unwritten() {
        return entries.values().stream().filter(e -> !e.written).map(Entry::obligation).toList();
    }

    /** A move of the session wrote these holds with it. */
    void written(List<CleanupObligation> holds) {
        holds.forEach(this::markWritten);
    }

    /**
     * A leg's native abort completed: the holds it {@code released} (as the connector knows) are settled by it, those
     * noted so far and those noted after it. A leg reports what it held as it ends, and the abort is what ends it: its
     * failure, or the cancel of a prefill whose answer never came, names the same holds (the same native id, on the
     * same engine) once the abort has answered. Noted anew, they were discharged a second time. A hold recorded by
     * another run (a participant's prefill) is discharged as usual.
     */
    synchronized void releasedByAbort(Predicate<HeldKv> released) {
        abortsCompleted.add(released);
        entries.replaceAll((id, e) -> e.held != null && !e.releasedByAbort && released.test(e.held)
                ? new Entry(e.obligation, e.held, e.written, true) : e);
    }

    /** The consumer's decode produced output: it has pulled the KV. */
    void pulled() {
        pulled = true;
    }

    /**
     * Writes every noted hold the store does not have yet, before the run moves on (a READY session must have its
     * parked KV recorded, so that another replica can discharge it if this one dies). Never fails: a hold that could
     * not be written is written again with the session's end.
     */
    Uni<Void> record() {
        List<CleanupObligation> unwritten;
        synchronized (this) {
            unwritten = entries.values().stream().filter(e -> !e.written).map(Entry::obligation).toList();
        }
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (CleanupObligation o : unwritten) {
            chain = chain.chain(() -> write(o));
        }
        // memoized: a cancel of the run does not cancel the write, and the end waits for it (so that a late write
        // cannot overwrite the outcome the end's cleanup wrote)
        Uni<Void> write = chain.memoize().indefinitely();
        synchronized (this) {
            Uni<Void> before = writing;
            writing = before.chain(() -> write);
        }
        return write;
    }

    /**
     * Closes the ledger for the session's end, once the writes in flight have landed: what the end must write with it
     * (unwritten holds as open obligations; holds freed by the consumer's pull as discharged). Anything noted after
     * this is recorded on its own.
     */
    Uni<List<CleanupObligation>> closing() {
        Uni<Void> inFlight;
        synchronized (this) {
            inFlight = writing;
        }
        return inFlight.onFailure().recoverWithNull().map(x -> {
            synchronized (this) {
                closed = true;
                List<CleanupObligation> settled = new ArrayList<>();
                for (Entry e : entries.values()) {
                    CleanupObligation o = e.obligation;
                    if (pulled && o.freedByPull()) {
                        settled.add(o.pulled());
                    } else if (e.releasedByAbort) {
                        settled.add(o.releasedByAbort());
                    } else if (!e.written) {
                        settled.add(o);
                    }
                }
                return settled;
            }
        });
    }

    /**
     * The session's end was not written by this run (it ended elsewhere, or the store refused the write): what the
     * end would have written is recorded now, the holds it never wrote and the holds it settled, which the store has
     * as pending. A hold its leg's abort or the consumer's pull released, left pending, is discharged again by
     * whoever ends the session: a second native abort of the same KV.
     */
    void endNotWritten(List<CleanupObligation> settled) {
        settled.forEach(o -> write(o).subscribe().with(x -> { }, f -> { }));
    }

    private Uni<Void> write(CleanupObligation o) {
        return sessions.recordObligation(tenant, sessionId, o)
                .invoke(s -> markWritten(o))
                .onFailure().invoke(f -> LOG.warnf("request %s: could not record %s held on %s: %s", requestId,
                        o.resource(), o.endpoint(), f.getMessage()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    private synchronized void markWritten(CleanupObligation o) {
        Entry e = entries.get(o.id());
        if (e != null && e.obligation == o) {
            entries.put(o.id(), new Entry(o, e.held, true, e.releasedByAbort));
        }
    }

    /** {@code held} is what the leg reported, or null for a hold recorded before this run (a participant's prefill). */
    private record Entry(CleanupObligation obligation, HeldKv held, boolean written, boolean releasedByAbort) {
    }
}
