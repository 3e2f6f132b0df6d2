package io.handoff.gateway.routing;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.http.Fault;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import com.google.protobuf.Struct;
import io.handoff.connector.spi.DischargeResult;
import io.handoff.gateway.reaper.CleanupPort;
import io.handoff.gateway.session.AllocateCommand;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.WireMockEnginesProfile;
import io.handoff.gateway.testing.WireMockEnginesResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The one engine call of a discharge under its guard, against an SGLang engine on WireMock that fails as scripted:
 * a call that fails once is tried again at once and discharges, without the reaper's scheduled next attempt (the
 * reaper does not run in this profile); a call that fails every time answers RETRY after its immediate retries, and
 * the store-backed schedule takes over.
 */
@QuarkusTest
@TestProfile(WireMockEnginesProfile.class)
class GuardedDischargeTest {

    private static final String TENANT = "default";
    private static final int CALLS_PER_ATTEMPT = WireMockEnginesProfile.DISCHARGE_RETRIES + 1;

    @Inject
    SessionService sessions;

    @Inject
    SessionStore store;

    @Inject
    CleanupPort port;

    @Inject
    Clock clock;

    @Test
    void aDischargeWhoseConnectionIsResetOnceIsRetriedAtOnceAndDischarged() {
        String rid = rid();
        WireMockServer engine = WireMockEnginesResource.prefill();
        String scenario = "reset once " + rid;
        engine.stubFor(post(urlEqualTo("/abort_request")).withRequestBody(containing(rid)).inScenario(scenario)
                .whenScenarioStateIs(Scenario.STARTED).willSetStateTo("reset")
                .willReturn(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER)));
        engine.stubFor(post(urlEqualTo("/abort_request")).withRequestBody(containing(rid)).inScenario(scenario)
                .whenScenarioStateIs("reset").willSetStateTo("answered")
                .willReturn(aResponse().withStatus(200)));

        String id = sessionHolding(rid);
        sessions.release(TENANT, id, "done", OptionalLong.empty()).await().atMost(Duration.ofSeconds(10));

        CleanupObligation settled = await().atMost(Duration.ofSeconds(20)).until(() -> obligationOf(id),
                o -> !o.isPending());
        assertEquals(CleanupObligation.Status.DISCHARGED, settled.status(), settled.toString());
        assertEquals(0, settled.attempts(), "discharged within its first attempt: " + settled);
        engine.verify(2, postRequestedFor(urlEqualTo("/abort_request")).withRequestBody(containing(rid)));
        assertEquals("answered", engine.getAllScenarios().getScenarios().stream()
                .filter(s -> s.getName().equals(scenario)).findFirst().orElseThrow().getState(),
                "the engine answered the retried call, once");
    }

    @Test
    void aDischargeThatFailsEveryTryAnswersRetryAndLeavesItToTheSchedule() {
        String rid = rid();
        WireMockServer engine = WireMockEnginesResource.prefill();
        engine.stubFor(post(urlEqualTo("/abort_request")).withRequestBody(containing(rid))
                .willReturn(aResponse().withStatus(503).withBody("{\"error\":\"overloaded\"}")));

        String id = sessionHolding(rid);
        sessions.release(TENANT, id, "done", OptionalLong.empty()).await().atMost(Duration.ofSeconds(10));

        CleanupObligation settled = await().atMost(Duration.ofSeconds(20)).until(() -> obligationOf(id),
                o -> o.attempts() > 0);
        assertEquals(CleanupObligation.Status.PENDING, settled.status(), settled.toString());
        assertEquals(1, settled.attempts(), "one attempt of the schedule, however many calls it made: " + settled);
        assertNotNull(settled.lastError(), settled.toString());
        engine.verify(CALLS_PER_ATTEMPT, postRequestedFor(urlEqualTo("/abort_request")).withRequestBody(
                containing(rid)));

        // the port's own answer, asked directly: RETRY, after as many calls again
        Session ended = store.find(id).await().atMost(Duration.ofSeconds(10)).orElseThrow();
        DischargeResult answer = port.discharge(ended, settled).await().atMost(Duration.ofSeconds(20));
        assertEquals(DischargeResult.Outcome.RETRY, answer.outcome(), answer.toString());
        engine.verify(2 * CALLS_PER_ATTEMPT, postRequestedFor(urlEqualTo("/abort_request")).withRequestBody(
                containing(rid)));
    }

    /** A live session of the route whose prefill engine holds KV under {@code rid}, as a cancelled leg leaves it. */
    private String sessionHolding(String rid) {
        String unique = UUID.randomUUID().toString();
        Session s = sessions.allocate(TENANT, new AllocateCommand("r-" + unique, WireMockEnginesResource.ROUTE,
                "k-" + unique, Optional.empty(), Optional.empty(), Optional.empty(), Struct.getDefaultInstance(), ""))
                .await().atMost(Duration.ofSeconds(10)).session();
        sessions.recordObligation(TENANT, s.id(), CleanupObligation.pending("prefill@" + WireMockEnginesResource.PREFILL,
                WireMockEnginesResource.ROUTE, WireMockEnginesResource.PREFILL, "prefill-request",
                Map.of("rid", rid), clock.instant().plus(Duration.ofMinutes(5)), false))
                .await().atMost(Duration.ofSeconds(10));
        return s.id();
    }

    private CleanupObligation obligationOf(String sessionId) {
        Session s = store.find(sessionId).await().atMost(Duration.ofSeconds(10)).orElseThrow();
        assertEquals(1, s.obligations().size(), s.toString());
        return s.obligations().get(0);
    }

    /** An SGLang rid as the connector mints them: 32 hex digits. */
    private static String rid() {
        return UUID.randomUUID().toString().replace("-", "");
    }
}
