package io.handoff.connector.sglang;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.connector.openai.completion.ChatRequests;
import io.handoff.connector.openai.completion.CompletionChunk;
import io.handoff.connector.openai.completion.CompletionStreams;
import io.handoff.connector.openai.family.OpenAiHttpConnector;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.Leg;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The SGLang connector of one route. See the package documentation and {@code mappings/sglang.md}.
 *
 * <p>Holds: the producer pins the prompt's KV from arrival until its decode took it or
 * {@code SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT}; the consumer pins preallocated KV until the transfer arrived or
 * {@code SGLANG_DISAGGREGATION_WAITING_TIMEOUT}. A prefill that answered has freed its KV (the answer comes after
 * the transfer), so Ready carries no hold. A leg that fails reports what both engines may still hold, both
 * releasable through {@code /abort_request}.
 */
final class SglangEngineConnector extends OpenAiHttpConnector {

    static final String ABORT_PATH = "/abort_request";
    static final String PREFILL_RESOURCE = "prefill-bootstrap-kv";
    static final String DECODE_RESOURCE = "decode-preallocated-kv";

    private final SglangSettings settings;
    private final SglangBodies bodies;
    private final SglangProbe probe;
    private final Rooms rooms;
    private final LocalLegs localLegs = new LocalLegs();

    SglangEngineConnector(ConnectorConfig config, SglangSettings settings, ConnectorContext context) {
        this(config, settings, context, Rooms.secure(context.clock(), settings.roomRetention()));
    }

    SglangEngineConnector(ConnectorConfig config, SglangSettings settings, ConnectorContext context, Rooms rooms) {
        super(SglangConnectorService.FAMILY, config, SglangCapabilities.of(settings), context, settings.client());
        this.settings = settings;
        this.bodies = new SglangBodies(config.model());
        this.probe = new SglangProbe(http, settings.probeTimeout());
        this.rooms = rooms;
    }

    Rooms rooms() {
        return rooms;
    }

    @Override
    public Handoff plan(String requestId, ScheduleStyle style, GenerateRequest request, Endpoint prefill,
            Endpoint decode) {
        requireEndpoints(prefill, decode);
        if (!capabilities().nativeStyles().contains(style)) {
            throw EngineException.unsupported("sglang supports concurrent and generation-first, not "
                    + style.configName() + ": a prefill answers only after its decode took the KV, so waiting for"
                    + " it before sending the decode deadlocks");
        }
        SglangFields.check(request);
        String host;
        try {
            host = settings.bootstrapHost(prefill);
        } catch (IllegalArgumentException e) {
            throw EngineException.invalid(e.getMessage());
        }
        SglangIds probeIds = new SglangIds(1, host, settings.bootstrapPort(prefill), "p", "d");
        bodies.decode(request, probeIds); // surfaces any refusal of the body builder now, before a room is taken
        long room = rooms.mint();
        String stem = rooms.ridStem();
        SglangIds ids = new SglangIds(room, host, settings.bootstrapPort(prefill), stem + "-p", stem + "-d");
        return new Handoff(requestId, style, request, prefill, decode, ids.toMap(), null);
    }

    @Override
    public List<HeldKv> heldAfterCancelledPrefill(Handoff handoff) {
        return List.of(hold(handoff, SglangIds.of(handoff), Leg.PREFILL, clock.instant()));
    }

    @Override
    public Uni<PrefillResult> prefill(Handoff handoff) {
        return Uni.createFrom().deferred(() -> {
            SglangIds ids = SglangIds.of(handoff);
            ObjectNode body = bodies.prefill(handoff.request(), ids);
            Instant sentAt = clock.instant();
            Uni<JsonNode> call = prefillHttp.postJson(handoff.prefill(), ChatRequests.path(handoff.request()),
                    handoff.forward(), body);
            return localLegs.abortable(ids.prefillRid(), call)
                    .map(answer -> prefillResult(answer, handoff, ids))
                    .onFailure(EngineException.class)
                    .transform(f -> afterFailure((EngineException) f, handoff, ids, Leg.PREFILL, sentAt))
                    .onTermination().invoke(() -> rooms.legEnded(ids.room(), true));
        });
    }

    private PrefillResult prefillResult(JsonNode answer, Handoff handoff, SglangIds ids) {
        List<CompletionChunk.Choice> choices = SglangChunks.normalize(CompletionChunk.of(answer),
                "prefill on " + handoff.prefill().name()).choices();
        JsonNode reason = choices.isEmpty() ? null : choices.get(0).finishReason();
        String finish = reason == null ? "" : reason.asText("");
        if ("abort".equals(finish)) {
            throw EngineException.sentFinal(ErrorCode.ERROR_CODE_CANCELLED, "the prefill on "
                    + handoff.prefill().name() + " (rid " + ids.prefillRid() + ", bootstrap_room " + ids.room()
                    + ") was aborted");
        }
        // the answer comes after the KV was written into the decode: the producer holds nothing any more
        return new PrefillResult.Ready(handoff, List.of());
    }

    @Override
    public Multi<GenerateResponse> decode(Handoff handoff) {
        return Multi.createFrom().deferred(() -> {
            SglangIds ids = SglangIds.of(handoff);
            ObjectNode body = bodies.decode(handoff.request(), ids);
            Instant sentAt = clock.instant();
            String what = "decode on " + handoff.decode().name();
            Multi<CompletionChunk> chunks = http.postSse(handoff.decode(), ChatRequests.path(handoff.request()),
                    handoff.forward(), body, CompletionChunk.EVENTS)
                    .onItem().transform(c -> SglangChunks.normalize(c, what));
            return localLegs.abortable(ids.decodeRid(), CompletionStreams.events(chunks, handoff.requestId()))
                    .onFailure(EngineException.class)
                    .transform(f -> afterFailure((EngineException) f, handoff, ids, Leg.DECODE, sentAt))
                    .onTermination().invoke(() -> rooms.legEnded(ids.room(), false));
        });
    }

    /** A PD-mode SGLang server refuses requests without a bootstrap room; a bypass needs a non-PD server. */
    @Override
    public Multi<GenerateResponse> decodeLocally(String requestId, GenerateRequest request, Endpoint decode,
            Map<String, String> forward) {
        return Multi.createFrom().failure(() -> EngineException.unsupported("sglang decode servers in PD mode do"
                + " not prefill locally (a request without bootstrap_room gets 400)"));
    }

    /**
     * Stops one leg: cancels its exchange in this process (if it runs here) and posts {@code /abort_request} with
     * the leg's rid to its endpoint, which SGLang answers 200 whether or not it knew the rid. This is how the gateway
     * cancels the twin of a failed leg: SGLang itself never tells the other side.
     */
    @Override
    public Uni<Void> abort(Handoff handoff, Leg leg) {
        return Uni.createFrom().deferred(() -> {
            SglangIds ids = SglangIds.of(handoff);
            String rid = ids.rid(leg);
            localLegs.abort(rid);
            return abortRequest(leg == Leg.PREFILL ? handoff.prefill() : handoff.decode(), rid);
        });
    }

    /** A leg's abort is the hold's discharge when it posted {@code /abort_request} for the hold's rid, there. */
    @Override
    public boolean abortReleases(Handoff handoff, Leg leg, HeldKv held) {
        Endpoint endpoint = leg == Leg.PREFILL ? handoff.prefill() : handoff.decode();
        return endpoint.equals(held.endpoint())
                && SglangIds.of(handoff).rid(leg).equals(held.handle().get(SglangIds.RID));
    }

    /** Frees what an engine holds for a rid through {@code /abort_request}: RELEASED once it answered, else RETRY. */
    @Override
    public Uni<DischargeResult> discharge(HeldKv held) {
        return Uni.createFrom().deferred(() -> {
            String rid = held.handle().get(SglangIds.RID);
            if (rid == null || rid.length() < 32) {
                return Uni.createFrom().item(DischargeResult.retry("the hold names no sglang rid: " + held.handle()));
            }
            return abortRequest(held.endpoint(), rid)
                    .invoke(() -> {
                        String room = held.handle().get(SglangIds.ROOM);
                        if (room != null) {
                            rooms.release(Long.parseLong(room));
                        }
                    })
                    .replaceWith(DischargeResult.released())
                    .onFailure().recoverWithItem(f -> DischargeResult.retry(f.getMessage()));
        });
    }

    private Uni<Void> abortRequest(Endpoint endpoint, String rid) {
        ObjectNode body = Json.object().put("rid", rid);
        return http.postJson(endpoint, ABORT_PATH, Map.of(), body)
                .onFailure(SglangEngineConnector::emptyOkAnswer).recoverWithNull()
                .replaceWithVoid();
    }

    /** SGLang answers /abort_request with 200 and no body, which the JSON client reads as a bad answer. */
    private static boolean emptyOkAnswer(Throwable f) {
        return f instanceof EngineException e && e.getCause() instanceof IllegalArgumentException
                && e.getMessage() != null && e.getMessage().contains("bad answer");
    }

    @Override
    public Uni<EndpointStatus> probe(Endpoint endpoint) {
        return probe.probe(endpoint);
    }

    // ------------------------------------------------------------------ failures and holds

    private EngineException afterFailure(EngineException failure, Handoff handoff, SglangIds ids, Leg leg,
            Instant sentAt) {
        EngineException e = classify(failure);
        List<HeldKv> held = new ArrayList<>();
        // SGLang never tells the twin: it keeps its KV until its own timer unless the gateway aborts it
        Leg twin = leg == Leg.PREFILL ? Leg.DECODE : Leg.PREFILL;
        held.add(hold(handoff, ids, twin, clock.instant()));
        if (e.sentToEngine()) {
            held.add(hold(handoff, ids, leg, sentAt));
        }
        return e.withHeld(held);
    }

    /** Transfer and bootstrap failures that SGLang reports as a plain 500 are KV transfer failures. */
    static EngineException classify(EngineException e) {
        String m = e.getMessage() == null ? "" : e.getMessage().toLowerCase(Locale.ROOT);
        if (e.code() == ErrorCode.ERROR_CODE_INTERNAL && (m.contains("kvpoll") || m.contains("transfer failed")
                || m.contains("failed to get kvcache") || m.contains("bootstrap"))) {
            return e.sentToEngine()
                    ? EngineException.sentFinal(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, e.getMessage(), e)
                    : EngineException.refused(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, e.getMessage(), e);
        }
        return e;
    }

    HeldKv hold(Handoff handoff, SglangIds ids, Leg leg, Instant from) {
        boolean prefill = leg == Leg.PREFILL;
        Endpoint endpoint = prefill ? handoff.prefill() : handoff.decode();
        Duration timer = prefill ? settings.bootstrapTimeout() : settings.waitingTimeout();
        return new HeldKv((prefill ? "prefill@" : "decode@") + endpoint.name(), endpoint,
                prefill ? PREFILL_RESOURCE : DECODE_RESOURCE,
                Map.of(SglangIds.RID, ids.rid(leg), SglangIds.ROOM, Long.toString(ids.room()),
                        SglangIds.LEG, leg.name().toLowerCase(Locale.ROOT)),
                from.plus(timer), true, prefill); // a prefill whose KV a decode received has sent and freed it
    }
}
