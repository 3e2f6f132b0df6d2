package io.handoff.connector.spi;

import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;

import java.util.List;
import java.util.Map;

/**
 * One engine family's translation of Handoff's legs onto its native disaggregation API, for one route.
 *
 * <h2>Lifecycle promises</h2>
 * <ul>
 * <li>The gateway calls {@link #plan} first, for every request, before anything is allocated. It must refuse
 * (with {@link EngineException#unsupported}) any style, input or field the connector cannot carry losslessly,
 * and must not contact an engine.</li>
 * <li>{@link #prefill} and {@link #decode} are lazy: nothing is sent until subscription. Cancelling a subscription
 * is an abort of that leg through the engine's native path; the connector makes sure an abandoned exchange is
 * closed, never left running.</li>
 * <li>{@link #decode} emits openengine.v1 events with the upstream rules: TokenOutput and GenerationFinished carry
 * output_index, tokens and text are never cumulative, one GenerationFinished per output, Usage only on the last
 * event. An engine failure after the leg was accepted is a failure of the stream with an
 * {@link EngineException}; the gateway turns it into exactly one terminal EngineError.</li>
 * <li>A failure always says whether anything reached the engine ({@link EngineException#sentToEngine()}), so the
 * gateway knows whether cleanup is owed. What the engine holds afterwards is reported as {@link HeldKv}.</li>
 * <li>{@link #discharge} is idempotent: it may be called again for the same {@link HeldKv} by another replica.
 * The gateway calls it once per hold where it can (not for a hold a leg's abort already released,
 * {@link #abortReleases}); again only when an attempt's outcome was not recorded.</li>
 * <li>Every call a leg makes to its engine carries the leg's forwarded headers verbatim ({@link Handoff#forward()},
 * or the {@code forward} argument of {@link #decodeLocally(String, GenerateRequest, Endpoint, Map)}): as HTTP
 * headers, or as gRPC metadata. They are how the engine's own traces join the request's trace (W3C
 * {@code traceparent}/{@code tracestate}); a connector adds none of its own under those names and drops none.</li>
 * <li>All methods are non-blocking; a connector never blocks an event-loop thread.</li>
 * <li>{@link #close} releases the connector's clients; no call is made after it.</li>
 * </ul>
 */
public interface EngineConnector extends AutoCloseable {

    ConnectorCapabilities capabilities();

    /**
     * Validates the request for this engine family and style and mints the native identities of its legs.
     * Pure: contacts no engine.
     *
     * @throws EngineException UNSUPPORTED_FEATURE or INVALID_ARGUMENT, before anything is sent anywhere
     */
    Handoff plan(String requestId, ScheduleStyle style, GenerateRequest request,
            Endpoint prefill, Endpoint decode);

    /** Runs the prefill leg on {@code handoff.prefill()}. */
    Uni<PrefillResult> prefill(Handoff handoff);

    /**
     * What the producer may still hold when a prefill leg was cancelled (by the client, an abort or its timeout)
     * before its answer was seen: the engine may have parked the KV a moment before the cancel reached it, and the
     * answer that would have said so is lost. The gateway records each as a cleanup obligation, after the leg's
     * native abort, so that no parked KV goes unaccounted whatever the timing. Answers an empty list only where the
     * engine is known to free everything a cancelled prefill parked. Pure: contacts no engine.
     */
    List<HeldKv> heldAfterCancelledPrefill(Handoff handoff);

    /**
     * Runs the decode leg on {@code handoff.decode()}: after {@link #prefill} in context-first (with the producer's
     * transfer data), or before or alongside it in generation-first and concurrent flows.
     */
    Multi<GenerateResponse> decode(Handoff handoff);

    /**
     * Runs a request on one decode endpoint that prefills locally (bypass), when
     * {@link ConnectorCapabilities#localPrefill()} says it can, sending {@code forward} with every call it makes to
     * the engine (see {@link Handoff#forward()}).
     */
    Multi<GenerateResponse> decodeLocally(String requestId, GenerateRequest request, Endpoint decode,
            Map<String, String> forward);

    /** {@link #decodeLocally(String, GenerateRequest, Endpoint, Map)} with nothing to forward. */
    default Multi<GenerateResponse> decodeLocally(String requestId, GenerateRequest request, Endpoint decode) {
        return decodeLocally(requestId, request, decode, Map.of());
    }

    /**
     * Stops one leg through the engine's explicit abort path, where it has one; engines whose only abort is closing
     * the connection complete at once (the gateway cancels the subscription).
     */
    Uni<Void> abort(Handoff handoff, Leg leg);

    /**
     * Whether an {@link #abort} of {@code leg} that completed without failure released {@code held}: true only where
     * that abort is the very engine call the hold's {@link #discharge} would make (the same id, on the same
     * endpoint). The gateway then settles the hold as discharged with the session's end instead of discharging it
     * a second time, so that each held KV is discharged once, whether the leg reported the hold before the abort
     * completed or after it (as it ends, failed or cancelled by the abort). False by default: an abort that only
     * closes a stream, or that names the leg by another id than the hold's discharge does, proves nothing about the
     * hold.
     */
    default boolean abortReleases(Handoff handoff, Leg leg, HeldKv held) {
        return false;
    }

    /** Frees KV an engine still holds, or says until when the engine will hold it. Idempotent. */
    Uni<DischargeResult> discharge(HeldKv held);

    /** Asks one endpoint about itself through the engine's native discovery surface. */
    Uni<EndpointStatus> probe(Endpoint endpoint);

    @Override
    void close();
}
