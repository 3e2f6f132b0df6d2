package io.handoff.gateway.orchestration;

import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.RedisTestResource;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A handoff whose decode finished completes the client's stream before its session's end is written; the run
 * counts on this replica until that end lands, and a retry with the same request id waits for it (docs/api.md,
 * "When the session's end is written").
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class EndAfterTheClientTest extends FleetTestSupport {

    @Inject
    LiveRequests live;

    @TestHTTPResource("/")
    URL base;

    @Test
    void theStreamCompletesWhileTheEndWaitsAndTheRunCountsUntilItLands() {
        FamilyEngines vllm = fleet().vllm();
        String id = requestId("end-after-the-client");
        int runningBefore = live.size();
        GenerateRequest request = request(FleetRoutes.VLLM_CONTEXT_FIRST, id, 100); // 0.5 s of decode at 5 ms
        StreamingGenerate call = start(request);
        Session attached = sessions.awaitOne(id, "attached", s -> s.state() == SessionState.ATTACHED);

        // no write lands until unpaused, or for 14 s (within the store's timeout of 15 s): the end cannot be written
        assertEquals("+OK", RedisTestResource.server().command("CLIENT PAUSE 14000 WRITE"));
        StreamingGenerate retry;
        try {
            assertFinishedOnce(call.awaitEnd(), id, FinishReason.FINISH_REASON_LENGTH);
            assertEquals("ATTACHED", stateInRedis(attached), "the end is not written yet");
            assertEquals(runningBefore + 1, live.size(), "the run counts until its end lands (drain, stop)");
            assertTrue(live.find(SimulatedFleetProfile.TENANT, id).isEmpty(), "the request id is free");

            // the client retries at once: the id is taken again here, and the retry waits for the first end
            retry = start(request.toBuilder().setStopping(request.getStopping().toBuilder().setMaxTokens(8)).build());
            Awaitility.await("the retry holds the request id").atMost(StreamingGenerate.WAIT)
                    .until(() -> live.find(SimulatedFleetProfile.TENANT, id).size() == 1);
            assertFalse(retry.ended(), "the retry waits for the first session's end");
            assertEquals("ATTACHED", stateInRedis(attached));
        } finally {
            RedisTestResource.server().command("CLIENT UNPAUSE");
        }

        assertFinishedOnce(retry.awaitEnd(), id, FinishReason.FINISH_REASON_LENGTH);
        Awaitility.await("both sessions complete").atMost(StreamingGenerate.WAIT).until(() -> sessions.of(id).stream()
                .filter(s -> s.state() == SessionState.COMPLETE).count() == 2);
        List<Session> attempts = sessions.of(id);
        Session first = attempts.stream().filter(s -> s.id().equals(attached.id())).findFirst().orElseThrow();
        assertEquals(4, first.epoch(), "ALLOCATED 1, READY 2 and ATTACHED 3 in one write, then COMPLETE 4");
        assertTrue(first.pendingObligations().isEmpty(), "the pulled hold was discharged with the end: "
                + first.obligations());
        Awaitility.await("no run left").atMost(StreamingGenerate.WAIT).until(() -> live.size() == runningBefore);
        awaitNoKvPinned(vllm);
    }

    @Test
    void theOpenAiStreamEndsWithItsLastChunkAndDoneWhileTheEndWaits() throws Exception {
        String id = requestId("end-after-the-client-http");
        int runningBefore = live.size();
        HttpRequest post = HttpRequest.newBuilder(URI.create(base + "v1/completions"))
                .header("Content-Type", "application/json").header("X-Request-Id", id)
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + FleetRoutes.VLLM_CONTEXT_FIRST
                        + "\",\"prompt\":\"the end comes after\",\"max_tokens\":100,\"stream\":true,"
                        + "\"stream_options\":{\"include_usage\":true}}"))
                .build();
        CompletableFuture<HttpResponse<String>> streamed = HttpClient.newHttpClient().sendAsync(post,
                HttpResponse.BodyHandlers.ofString());
        Session attached = sessions.awaitOne(id, "attached", s -> s.state() == SessionState.ATTACHED);

        assertEquals("+OK", RedisTestResource.server().command("CLIENT PAUSE 14000 WRITE"));
        try {
            HttpResponse<String> response = streamed.get(StreamingGenerate.WAIT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(200, response.statusCode(), response.body());
            List<String> data = response.body().lines().filter(l -> l.startsWith("data: "))
                    .map(l -> l.substring(6)).toList();
            assertEquals("[DONE]", data.get(data.size() - 1));
            assertTrue(data.get(data.size() - 2).contains("\"completion_tokens\":100"),
                    "usage on its own last chunk: " + data.get(data.size() - 2));
            assertEquals("ATTACHED", stateInRedis(attached), "the end is not written yet");
            assertEquals(runningBefore + 1, live.size(), "the run counts until its end lands");
        } finally {
            RedisTestResource.server().command("CLIENT UNPAUSE");
        }
        Awaitility.await("the session completes").atMost(StreamingGenerate.WAIT)
                .until(() -> "COMPLETE".equals(stateInRedis(attached)));
        Awaitility.await("no run left").atMost(StreamingGenerate.WAIT).until(() -> live.size() == runningBefore);
        awaitNoKvPinned(fleet().vllm());
    }

    /** The session's state as Redis holds it, read past the gateway with a plain read (not paused). */
    private static String stateInRedis(Session session) {
        String keys = RedisTestResource.server().reply("KEYS", "*:session:" + session.id());
        assertEquals(1, keys.lines().count(), keys);
        return RedisTestResource.server().reply("HGET", keys.strip(), "state");
    }
}
