package io.handoff.gateway.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.MockWebServer;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.HashMap;
import java.util.Map;

/**
 * fabric8's mock Kubernetes API server in CRUD mode (what is created can be listed and watched), in this JVM on a free
 * port, plain HTTP: the gateway's discovery is pointed at it with {@code handoff.kubernetes.api-server-url}, and a test
 * changes EndpointSlices through {@link #client()}.
 */
public class KubernetesApiResource implements QuarkusTestResourceLifecycleManager {

    private static volatile KubernetesMockServer server;
    private static volatile KubernetesClient client;

    /** A client of the mock API server, for the test's own changes. */
    public static KubernetesClient client() {
        return client;
    }

    @Override
    public Map<String, String> start() {
        // the mock server's Context, named in full: this class inherits another Context from its interface
        server = new KubernetesMockServer(new io.fabric8.mockwebserver.Context(), new MockWebServer(),
                new HashMap<>(), new KubernetesCrudDispatcher(), false);
        server.init();
        client = server.createClient();
        return Map.of("handoff.kubernetes.api-server-url", server.url("/"));
    }

    @Override
    public void stop() {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.destroy();
        }
    }
}
