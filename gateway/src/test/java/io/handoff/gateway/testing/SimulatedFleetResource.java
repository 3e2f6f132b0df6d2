package io.handoff.gateway.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.Map;

/**
 * Starts the simulated engine fleet in this JVM before Quarkus and configures the routes to it. Tests reach the
 * engines through {@link #fleet()}.
 */
public class SimulatedFleetResource implements QuarkusTestResourceLifecycleManager {

    private static volatile EngineFleet fleet;

    /** The engines of the running profile. */
    public static EngineFleet fleet() {
        EngineFleet running = fleet;
        if (running == null) {
            throw new IllegalStateException("the simulated fleet is not running (use SimulatedFleetProfile)");
        }
        return running;
    }

    @Override
    public Map<String, String> start() {
        fleet = EngineFleet.start();
        return FleetRoutes.of(fleet);
    }

    @Override
    public void stop() {
        if (fleet != null) {
            fleet.close();
            fleet = null;
        }
    }
}
