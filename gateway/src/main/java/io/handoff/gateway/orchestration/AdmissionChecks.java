package io.handoff.gateway.orchestration;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.connector.spi.InputKind;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.routing.BypassPolicy.Trigger;
import io.handoff.gateway.routing.BypassPolicy;
import io.handoff.gateway.routing.Route;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.KvTransferDisposition;
import io.handoff.openengine.v1.SamplingParams;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What admission checks of a Generate against its route before it takes anything: pure functions of the request,
 * the route and the limits, each refusing with the {@link GenerateRefusal} a client gets. No I/O, no state, no CDI.
 */
final class AdmissionChecks {

    private AdmissionChecks() {
    }

    /**
     * The request's identity and input fit the route: a request id within {@code maxIdBytes}, an input kind the
     * route's connector carries, no session of its own unless the leg is a participant's decode, no more outputs
     * than the route carries, and a length the engines accept.
     */
    static void validate(Route route, GenerateRequest request, int maxIdBytes, boolean sessionAllowed) {
        String id = request.getRequestId();
        if (id.isEmpty()) {
            throw GenerateRefusal.invalid("request_id is required");
        }
        if (id.getBytes(StandardCharsets.UTF_8).length > maxIdBytes) {
            throw GenerateRefusal.invalid("request_id is longer than " + maxIdBytes + " bytes");
        }
        InputKind input = InputKind.of(request);
        if (input == null) {
            throw GenerateRefusal.invalid("one of prompt or token_ids (or, for a chat, extra.messages) is required");
        }
        if (!route.capabilities().inputs().contains(input)) {
            throw GenerateRefusal.unsupported("route " + route.name() + " (" + route.family() + ") does not carry "
                    + (input == InputKind.CHAT_MESSAGES ? "chat requests (extra.messages)"
                            : input.name().toLowerCase(Locale.ROOT) + " prompts"));
        }
        if (request.getKv().hasSession() && !sessionAllowed) {
            throw GenerateRefusal.invalid("kv.session is set: an orchestrated Generate gets its session from Handoff;"
                    + " a framework that drives the legs itself names the leg in the handoff-leg metadata");
        }
        finiteNumbers(request);
        if (request.getKv().getTransferDisposition() == KvTransferDisposition.UNRECOGNIZED) {
            throw GenerateRefusal.invalid("kv.transfer_disposition " + request.getKv().getTransferDispositionValue()
                    + " is not a known disposition");
        }
        int outputs = outputs(request);
        if (outputs > route.capabilities().maxOutputs()) {
            throw GenerateRefusal.unsupported("sampling.num_sequences " + outputs + " is more than route "
                    + route.name() + " carries (" + route.capabilities().maxOutputs() + ")");
        }
        fitsContext(route, request);
    }

    /**
     * Sampling knobs and the numbers of {@code extra} are finite: an engine's JSON cannot carry NaN or infinity, so
     * such a request could only fail there, after a session and an engine's KV were taken for it.
     */
    static void finiteNumbers(GenerateRequest request) {
        SamplingParams s = request.getSampling();
        if (!Double.isFinite(s.getTemperature()) || !Double.isFinite(s.getTopP()) || !Double.isFinite(s.getMinP())
                || !Double.isFinite(s.getFrequencyPenalty()) || !Double.isFinite(s.getPresencePenalty())
                || !Double.isFinite(s.getRepetitionPenalty())) {
            throw GenerateRefusal.invalid("sampling parameters must be finite numbers (no NaN or infinity)");
        }
        if (request.hasExtra() && !finite(request.getExtra())) {
            throw GenerateRefusal.invalid("extra holds a number that is NaN or infinite, which JSON cannot carry");
        }
    }

    private static boolean finite(Struct struct) {
        for (Value v : struct.getFieldsMap().values()) {
            if (!finite(v)) {
                return false;
            }
        }
        return true;
    }

    private static boolean finite(Value v) {
        return switch (v.getKindCase()) {
            case NUMBER_VALUE -> Double.isFinite(v.getNumberValue());
            case STRUCT_VALUE -> finite(v.getStructValue());
            case LIST_VALUE -> v.getListValue().getValuesList().stream().allMatch(AdmissionChecks::finite);
            default -> true;
        };
    }

    /** How many outputs the client expects: num_sequences, 1 when unset. */
    static int outputs(GenerateRequest request) {
        if (!request.getSampling().hasNumSequences()) {
            return 1;
        }
        int n = request.getSampling().getNumSequences();
        if (n < 1) {
            throw GenerateRefusal.invalid("sampling.num_sequences must be at least 1 when set");
        }
        return n;
    }

    /**
     * A request the engines would refuse for its length is refused here: max_tokens alone longer than the route's
     * context, or token ids and max_tokens together. A text prompt's length in tokens is the engine's to count; that
     * check stays the engine's.
     */
    static void fitsContext(Route route, GenerateRequest request) {
        OptionalInt context = route.contextLength();
        if (context.isEmpty()) {
            return;
        }
        long maxTokens = request.getStopping().hasMaxTokens()
                ? Integer.toUnsignedLong(request.getStopping().getMaxTokens()) : 0;
        long promptTokens = request.hasTokenIds() ? request.getTokenIds().getIdsCount() : 0;
        if (maxTokens > context.getAsInt()) {
            throw GenerateRefusal.invalid("stopping.max_tokens " + maxTokens + " is more than the context length of "
                    + "route " + route.name() + " (" + context.getAsInt() + " tokens)");
        }
        if (promptTokens + maxTokens > context.getAsInt()) {
            throw GenerateRefusal.invalid("the prompt's " + promptTokens + " tokens and stopping.max_tokens "
                    + maxTokens + " are more than the context length of route " + route.name() + " ("
                    + context.getAsInt() + " tokens)");
        }
    }

    /**
     * The tokens a tenant's tokens-per-second limit charges at admission: the prompt (exact for token ids, estimated
     * for text, as the short-prompt bypass counts it) plus max_tokens for each output; 0 for max_tokens unset. The
     * usage reported at the end corrects it.
     */
    static long chargedTokens(GenerateRequest request) {
        long maxTokens = request.getStopping().hasMaxTokens()
                ? Integer.toUnsignedLong(request.getStopping().getMaxTokens()) : 0;
        long outputs = request.getSampling().hasNumSequences() ? Math.max(1, request.getSampling().getNumSequences())
                : 1;
        return BypassPolicy.promptTokens(request) + outputs * maxTokens;
    }

    /** The style the request runs in: the one it names, which the route must enable, or the route's default. */
    static ScheduleStyle style(Route route, GenerateRequest request) {
        KvScheduleStyle asked = request.getKv().getScheduleStyle();
        Optional<ScheduleStyle> named;
        try {
            named = ScheduleStyle.ofWire(asked);
        } catch (IllegalArgumentException unknown) {
            throw GenerateRefusal.invalid("kv.schedule_style " + asked + " is not a known style");
        }
        if (named.isEmpty()) {
            return route.settings().defaultStyle();
        }
        ScheduleStyle style = named.get();
        if (!route.allows(style)) {
            throw GenerateRefusal.unsupported("schedule style " + style.configName() + " is not enabled on route "
                    + route.name() + " (enabled: " + route.settings().styles().stream().map(ScheduleStyle::configName)
                            .sorted().toList() + ")");
        }
        return style;
    }

    /**
     * Whether the request skips the prefill pool, and why: the client asks (BYPASS, when the route allows it), or the
     * route's policy decides (always, a short prompt, every prefill endpoint out or full). REQUIRED never bypasses.
     * The uncached-prompt trigger is not decided here: it needs the decode endpoint ({@link #mayBypassUncached}).
     */
    static Optional<Trigger> bypass(Route route, GenerateRequest request) {
        BypassPolicy policy = route.settings().bypass();
        KvTransferDisposition disposition = request.getKv().getTransferDisposition();
        if (disposition == KvTransferDisposition.KV_TRANSFER_DISPOSITION_BYPASS) {
            if (!policy.has(Trigger.EXPLICIT) && !policy.has(Trigger.ALWAYS)) {
                throw GenerateRefusal.unsupported("route " + route.name() + " does not allow transfer disposition "
                        + "BYPASS (bypass.when does not include explicit)");
            }
            return Optional.of(policy.has(Trigger.ALWAYS) ? Trigger.ALWAYS : Trigger.EXPLICIT);
        }
        if (disposition == KvTransferDisposition.KV_TRANSFER_DISPOSITION_REQUIRED) {
            return Optional.empty();
        }
        if (policy.has(Trigger.ALWAYS)) {
            return Optional.of(Trigger.ALWAYS);
        }
        if (policy.has(Trigger.SHORT_PROMPT) && BypassPolicy.promptTokens(request) < policy.shortPromptTokens()) {
            return Optional.of(Trigger.SHORT_PROMPT);
        }
        if (policy.has(Trigger.PREFILL_UNAVAILABLE) && !route.prefill().available()) {
            return Optional.of(Trigger.PREFILL_UNAVAILABLE);
        }
        return Optional.empty();
    }

    /**
     * Whether the uncached-prompt trigger may bypass a request no other trigger bypassed: the route has it on and
     * the request does not require the transfer. It is decided later, once the decode endpoint is taken
     * ({@link #fewUncached}).
     */
    static boolean mayBypassUncached(Route route, GenerateRequest request) {
        return route.settings().bypass().has(Trigger.UNCACHED_PROMPT)
                && request.getKv().getTransferDisposition() != KvTransferDisposition.KV_TRANSFER_DISPOSITION_REQUIRED;
    }

    /**
     * Whether the decode endpoint taken would prefill few enough of the prompt itself to bypass the prefill leg:
     * at most {@code bypass.uncached-prompt-tokens}, by the estimate of its prefix cache.
     */
    static boolean fewUncached(Route route, OptionalInt uncachedTokens) {
        return uncachedTokens.isPresent()
                && uncachedTokens.getAsInt() <= route.settings().bypass().uncachedPromptTokens();
    }

    /**
     * The request as the engines receive it: the model named as the engines serve it, and without our own KvOptions
     * fields and our session ref, which are for the gateway (connectors add the engine's native handoff fields).
     */
    static GenerateRequest forEngines(Route route, GenerateRequest request) {
        GenerateRequest.Builder b = request.toBuilder().setModel(route.settings().engineModel());
        if (request.hasKv()) {
            b.getKvBuilder().clearScheduleStyle().clearTransferDisposition().clearSession();
            if (b.getKv().equals(KvOptions.getDefaultInstance())) {
                b.clearKv();
            }
        }
        return b.build();
    }
}
