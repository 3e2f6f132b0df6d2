package io.handoff.gateway.orchestration;

import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.ReferenceAnswers;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static io.handoff.gateway.testing.GenerateEvents.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every schedule style on every engine that supports it natively, through the gateway's gRPC: the answer equals the
 * engine's aggregated answer, the stream keeps the event rules, the session ends COMPLETE with its cleanup done,
 * and no engine pins KV afterwards.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class GenerateStylesTest extends FleetTestSupport {

    @ParameterizedTest(name = "{0} asked for {1}")
    @CsvSource({
            FleetRoutes.VLLM_CONTEXT_FIRST + ", KV_SCHEDULE_STYLE_CONTEXT_FIRST",
            FleetRoutes.SGLANG_CONCURRENT + ", KV_SCHEDULE_STYLE_CONCURRENT",
            FleetRoutes.SGLANG_GENERATION_FIRST + ", KV_SCHEDULE_STYLE_GENERATION_FIRST",
            FleetRoutes.TRTLLM_CONTEXT_FIRST + ", KV_SCHEDULE_STYLE_CONTEXT_FIRST",
            FleetRoutes.TRTLLM_GENERATION_FIRST + ", KV_SCHEDULE_STYLE_GENERATION_FIRST",
            FleetRoutes.VLLM_CONTEXT_FIRST + ", KV_SCHEDULE_STYLE_UNSPECIFIED",
            FleetRoutes.SGLANG_CONCURRENT + ", KV_SCHEDULE_STYLE_UNSPECIFIED",
            FleetRoutes.TRTLLM_GENERATION_FIRST + ", KV_SCHEDULE_STYLE_UNSPECIFIED"})
    void answersAsTheEngineDoesAggregated(String route, KvScheduleStyle style) {
        FamilyEngines family = fleet().family(FleetRoutes.FAMILY_OF.get(route));
        String id = requestId(route);
        GenerateRequest request = request(route, id, 12).toBuilder()
                .setKv(KvOptions.newBuilder().setScheduleStyle(style)).build();

        List<GenerateResponse> events = run(request);

        assertFinishedOnce(events, id, FinishReason.FINISH_REASON_LENGTH);
        assertEquals(ReferenceAnswers.text(family, request.getPrompt(), 12), text(events));
        assertEquals(12, events.get(events.size() - 1).getUsage().getCompletionTokens());
        Session session = sessions.awaitOne(id, "COMPLETE with its cleanup done",
                s -> s.state() == SessionState.COMPLETE && s.pendingObligations().isEmpty());
        assertEquals(route, session.route());
        assertTrue(session.obligations().stream().allMatch(o -> o.status() != CleanupObligation.Status.ABANDONED),
                session.obligations().toString());
        for (FamilyEngines f : fleet().families()) {
            awaitNoKvPinned(f);
        }
    }
}
