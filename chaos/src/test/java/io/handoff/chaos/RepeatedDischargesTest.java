package io.handoff.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The check "KV discharged more than once" against the real simulated fleet (a process, as in a run): an SGLang rid
 * aborted twice is counted, and excused only when a loss of the store's writes lies between the two aborts.
 */
class RepeatedDischargesTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static SimulatorFleet fleet;
    private final HttpClient client = HttpClient.newHttpClient();

    @BeforeAll
    static void startFleet() throws Exception {
        fleet = SimulatorFleet.start(System.getProperty("java.class.path"),
                Files.createTempDirectory("repeated-discharges"), 4000, 5);
    }

    @AfterAll
    static void stopFleet() {
        if (fleet != null) {
            fleet.stop();
        }
    }

    @Test
    void aRidAbortedTwiceIsADoubleDischargeUnlessTheStoreLostItsWritesBetween() throws Exception {
        History history = new History();
        SimulatorFleet.Engine sglang = fleet.get("sglang", "prefill");
        abort(sglang, "chaos-once");
        assertEquals(0, count(history).total(), "one abort per rid");

        abort(sglang, "chaos-twice");
        abort(sglang, "chaos-twice");
        RepeatedDischarges.Count c = count(history);
        assertEquals(1, c.total());
        assertEquals(1, c.unexcused(), "nothing excuses it: the check fails the run");

        abort(sglang, "chaos-lost");
        Sleep.millis(20); // the engine stamps milliseconds: the loss lies strictly between the two aborts
        long lossAt = System.nanoTime();
        history.storeLoss(History.WIPE, lossAt, lossAt);
        Sleep.millis(20);
        abort(sglang, "chaos-lost");
        c = count(history);
        assertEquals(2, c.total());
        assertEquals(1, c.afterLoss(), "the repeat after the wipe is explained by it");
        assertEquals(1, c.unexcused(), "the earlier one still is not");
    }

    /**
     * A replica killed just after it made the engine call dies before it writes what it did; its claim runs out, and
     * another replica discharges again. Excused only with both marks of that: the death right after the first abort,
     * and the second as late as a takeover of the claim. (The engines' list, as /sim/stats gives it, written here.)
     */
    @Test
    void aRepeatIsExcusedByAReplicasDeathOnlyRightAfterTheFirstAndWithATakeoversDelay() {
        History history = new History();
        history.event("replica-killed", "r0-g1");
        long killedAt = System.currentTimeMillis(); // the event's own stamp, or a few ms after it
        long takeover = ChaosSettings.CLAIM_TTL_MS;
        ObjectNode stats = JSON.createObjectNode().put("aborts_repeated_total", 3);
        ArrayNode repeats = stats.putArray("aborts_repeated");
        repeats.addObject().put("id", "rid died-mid-discharge").put("first_at_ms", killedAt - 100)
                .put("again_at_ms", killedAt - 100 + takeover);
        repeats.addObject().put("id", "rid too-soon-for-a-takeover").put("first_at_ms", killedAt - 100)
                .put("again_at_ms", killedAt + 300);
        repeats.addObject().put("id", "rid killed-long-after").put("first_at_ms", killedAt - 2_000)
                .put("again_at_ms", killedAt - 2_000 + takeover);

        RepeatedDischarges.Count c = RepeatedDischarges.count(Map.of("sglang-prefill", stats), history);
        assertEquals(1, c.afterDeath(), c.lines().toString());
        assertEquals(2, c.unexcused(), c.lines().toString());
        assertEquals(0, c.afterLoss());
    }

    private RepeatedDischarges.Count count(History history) throws Exception {
        Map<String, JsonNode> stats = new LinkedHashMap<>();
        HttpCalls http = new HttpCalls(history);
        for (SimulatorFleet.Engine e : fleet.engines()) {
            stats.put(e.name(), http.simStats(e.url()));
        }
        return RepeatedDischarges.count(stats, history);
    }

    private void abort(SimulatorFleet.Engine e, String rid) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(e.url() + "/abort_request"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"rid\":\"" + rid + "\"}")).build();
        assertEquals(200, client.send(req, HttpResponse.BodyHandlers.discarding()).statusCode());
    }
}
