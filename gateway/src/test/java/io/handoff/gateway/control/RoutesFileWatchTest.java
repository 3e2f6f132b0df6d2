package io.handoff.gateway.control;

import io.grpc.Status;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.routing.RoutesFileWatch;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.LogCapture;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.SimFleetTestResource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The watched routes file: a change is reloaded once the poll period has passed on the gateway's clock, exactly as
 * the admin call reloads; a file the routes cannot come from is refused, logged and counted, and the routes serving
 * stay until it changes again.
 */
@QuarkusTest
@TestProfile(RouteReloadProfile.class)
class RoutesFileWatchTest extends ControlPlaneTest {

    @Inject
    RouteRegistry routes;

    @Inject
    MeterRegistry registry;

    @Inject
    Clock clock;

    @Inject
    RoutesFileWatch watch;

    private void write(Map<String, String> properties) throws IOException {
        write(RouteReloadTest.text(properties));
    }

    private static void write(String text) throws IOException {
        Files.createDirectories(RouteReloadProfile.ROUTES_FILE.getParent());
        Files.writeString(RouteReloadProfile.ROUTES_FILE, text);
    }

    private void pollPeriodPasses() {
        ((MutableClock) clock).advance(Duration.parse("PT" + RouteReloadProfile.POLL));
    }

    private double fileReloads(String outcome) {
        Counter counter = registry.find("handoff.routes.reloads").tags("source", "file", "outcome", outcome)
                .counter();
        return counter == null ? 0 : counter.count();
    }

    @AfterEach
    void backToTheBaseline() throws IOException {
        write(SimFleetTestResource.routeProperties());
        pollPeriodPasses();
        await().atMost(Duration.ofSeconds(10)).until(() -> routes.named("vllm-2").isEmpty());
        Files.deleteIfExists(RouteReloadProfile.ROUTES_FILE);
    }

    @Test
    void aChangedFileIsReloadedOnceThePollPeriodHasPassed() throws IOException {
        long before = routes.table().generation();
        double applied = fileReloads("applied");

        write(RouteReloadTest.withSecondRoute());
        pollPeriodPasses();

        await().atMost(Duration.ofSeconds(10)).until(() -> routes.table().generation() == before + 1);
        assertTrue(routes.named("vllm-2").isPresent());
        assertEquals(applied + 1, fileReloads("applied"));
        assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm-2", 4)
                .awaitEnd().getCode());
    }

    @Test
    void aBadFileIsRefusedCountedAndTheRoutesServingStay() throws IOException {
        var table = routes.table();
        double refused = fileReloads("refused");
        Map<String, String> bad = RouteReloadTest.withSecondRoute();
        bad.put("handoff.routes.vllm-2.family", "no-such-family");

        List<String> logged;
        try (LogCapture log = LogCapture.of(RouteRegistry.class)) {
            write(bad);
            pollPeriodPasses();
            // the refusal is counted, then logged, on the watch's thread
            await().atMost(Duration.ofSeconds(10)).until(() -> fileReloads("refused") == refused + 1
                    && !log.errors().isEmpty());
            logged = log.errors();
        }

        assertEquals(table, routes.table(), "nothing changed");
        assertEquals(1, logged.size(), logged.toString());
        assertTrue(logged.get(0).startsWith("routes reload (file) refused, generation " + table.generation()
                + " keeps serving: route vllm-2"), logged.get(0));
        assertTrue(logged.get(0).contains("no-such-family"), logged.get(0));
        // the same bad text is not tried again at the next poll
        assertEquals(Optional.empty(), watch.poll());
        assertEquals(refused + 1, fileReloads("refused"));
        assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4)
                .awaitEnd().getCode());
    }
}
