package io.handoff.gateway.control;

import io.handoff.gateway.testing.ControlPlaneProfile;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The control-plane profile in a gateway of its own, shared by the tests that reload its routes (they change the
 * table every other test of the control plane serves from), watching a routes file that is not there until a test
 * writes it.
 */
public class RouteReloadProfile extends ControlPlaneProfile {

    /** The watched file, in the build's own directory. */
    static final Path ROUTES_FILE = Path.of("target", "route-reload", "routes.properties").toAbsolutePath();

    /** How often the file is read, on the test's clock. */
    static final String POLL = "30s";

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> c = new HashMap<>(super.getConfigOverrides());
        c.put("handoff.routes-file", ROUTES_FILE.toString());
        c.put("handoff.routes-file-poll", POLL);
        return c;
    }
}
