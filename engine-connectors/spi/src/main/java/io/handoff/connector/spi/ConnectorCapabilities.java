package io.handoff.connector.spi;

import java.time.Duration;
import java.util.Set;

/**
 * What an engine family can do natively, as configured for one route. The gateway decides from this alone
 * (it never names an engine): a style outside {@link #nativeStyles()} is refused before allocation, a lease longer
 * than {@link #engineHold()} makes a route fail to start, a field outside {@link #requestFields()} is refused with
 * UNSUPPORTED_FEATURE before anything is sent. Nothing is emulated silently.
 *
 * @param nativeStyles         schedule styles the engine's own handoff supports
 * @param engineHold           how long the engine keeps parked KV after a prefill if no decode takes it
 * @param decodeRenewsHold     whether a decode that has reached the engine keeps the parked KV alive
 *                             (so a queued decode is never cut off by the engine's timer)
 * @param earlyRelease         whether parked KV can be released before {@link #engineHold()} ends
 * @param abortMode            how a running leg is stopped
 * @param localPrefill         whether a decode endpoint can prefill locally (bypass)
 * @param inputs               prompt forms accepted
 * @param requestFields        openengine.v1 GenerateRequest field paths carried losslessly
 *                             (e.g. {@code sampling.temperature}, {@code stopping.max_tokens})
 * @param decodeRetryElsewhere whether a decode that never reached its endpoint may be sent to another endpoint of
 *                             the pool with the same handoff data
 * @param maxOutputs           most outputs (n) per request the handoff supports
 */
public record ConnectorCapabilities(
        Set<ScheduleStyle> nativeStyles,
        Duration engineHold,
        boolean decodeRenewsHold,
        boolean earlyRelease,
        AbortMode abortMode,
        boolean localPrefill,
        Set<InputKind> inputs,
        Set<String> requestFields,
        boolean decodeRetryElsewhere,
        int maxOutputs) {

    public ConnectorCapabilities {
        nativeStyles = Set.copyOf(nativeStyles);
        inputs = Set.copyOf(inputs);
        requestFields = Set.copyOf(requestFields);
    }
}
