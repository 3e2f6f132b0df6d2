package io.handoff.gateway.runtime;

import io.handoff.gateway.testing.DocumentedKeys;
import io.handoff.gateway.testing.KubernetesApiResource;
import io.handoff.simulator.Role;
import io.handoff.simulator.vllm.VllmConfig;
import io.handoff.simulator.vllm.VllmEngine;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.vertx.core.Vertx;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The gateway started with every key of README's configuration table set, and one route with every key of
 * docs/api.md's routes table set: a key's documented default where the table gives one literal value, otherwise
 * the valid value in {@link #SAMPLES}. A documented key that no code reads stops Quarkus at start (every
 * {@code handoff.} key is validated), so the tables and the code cannot drift apart unnoticed. The routes' discovery
 * keys point at a mock Kubernetes API server ({@link KubernetesApiResource}).
 */
public class DocumentedConfigurationProfile implements QuarkusTestProfile {

    static final String ROUTE = "documented";
    static final String ENGINE_MODEL = "documented-engine-model";
    static final String REPLICA_ID = "documented-replica";

    /** Valid values for documented keys whose table gives no single literal default. */
    static final Map<String, String> SAMPLES = Map.ofEntries(
            Map.entry("handoff.replica-id", REPLICA_ID),
            // a file that is not there: the watch reads it, says so, and the configured routes serve
            Map.entry("handoff.routes-file", "target/documented-routes/routes.properties"),
            Map.entry("handoff.auth.admin-keys", "documented-admin-key"),
            Map.entry("handoff.auth.tenants.<tenant>.api-keys", "documented-tenant-key"),
            // generous: the limits are read and built, and no request of this test waits on them
            Map.entry("handoff.rate-limits.default.requests-per-second", "10000"),
            Map.entry("handoff.rate-limits.default.request-burst", "10000"),
            Map.entry("handoff.rate-limits.default.tokens-per-second", "100000000"),
            Map.entry("handoff.rate-limits.default.token-burst", "100000000"),
            Map.entry("handoff.rate-limits.tenants.<tenant>.requests-per-second", "10000"),
            Map.entry("handoff.rate-limits.tenants.<tenant>.request-burst", "10000"),
            Map.entry("handoff.rate-limits.tenants.<tenant>.tokens-per-second", "100000000"),
            Map.entry("handoff.rate-limits.tenants.<tenant>.token-burst", "100000000"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "model", "documented-model"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "aliases", "documented-alias,another-alias"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "engine-model", ENGINE_MODEL),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "family", "vllm"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "default-style", "context-first"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "styles", "context-first"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "bypass.when", "explicit,short-prompt"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "bypass.short-prompt-tokens", "12"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "bypass.uncached-prompt-tokens", "48"),
            // not the default, so that the test sees it was read
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "bypass.decode-cache-tokens", "131072"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "lease-default", "20s"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "lease-max", "90s"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "breaker-failures", "4"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "breaker-open-for", "15s"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "max-in-flight", "77"),
            // not the default (0, no queue), so that the route's queue is made and the test sees it was read
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "queue.max-waiting", "3"),
            // not the defaults, so that the test sees the policies were read
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "prefill-policy", "prefix-affinity"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "decode-policy", "power-of-two"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "prefix-affinity.blocks", "4"),
            // discovery on, against the mock API server of KubernetesApiResource, whose namespace has no slices
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "prefill-discovery.kubernetes.label-selector", "app=documented-p"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "decode-discovery.kubernetes.label-selector", "app=documented-d"),
            // one pool of each source
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "prefill-discovery.kubernetes.source", "pods"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "decode-discovery.kubernetes.source", "endpoint-slices"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "prefill-discovery.kubernetes.namespace", "documented"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "decode-discovery.kubernetes.namespace", "documented"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "prefill-discovery.kubernetes.port-name", "http"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "decode-discovery.kubernetes.port-name", "http"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "prefill-discovery.kubernetes.port", "8000"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "decode-discovery.kubernetes.port", "8000"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "prefill-discovery.kubernetes.scheme", "http"),
            Map.entry(DocumentedKeys.ROUTE_PREFIX + "decode-discovery.kubernetes.scheme", "http"));

    /** Documented keys whose value another test resource gives: the mock API server's URL is known once it runs. */
    static final Set<String> GIVEN_ELSEWHERE = Set.of("handoff.kubernetes.api-server-url");

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(Engines.class), new TestResourceEntry(KubernetesApiResource.class));
    }

    /** A value for every documented key, or a failure naming the key that has none. */
    static Map<String, String> documentedValues(String prefillUrl, String decodeUrl) {
        Map<String, String> config = new LinkedHashMap<>();
        for (DocumentedKeys.Key key : DocumentedKeys.readme()) {
            if (key.name().equals(DocumentedKeys.ROUTE_PREFIX + "*")) {
                continue; // the routes table's keys, below
            }
            if (GIVEN_ELSEWHERE.contains(key.name())) {
                continue;
            }
            config.put(key.name().replace("<tenant>", "documented"), value(key));
        }
        for (DocumentedKeys.Key key : DocumentedKeys.routes()) {
            String name = key.name().replace("<name>", ROUTE);
            switch (key.name().substring(DocumentedKeys.ROUTE_PREFIX.length())) {
                case "prefill" -> config.put(name, "p-0=" + prefillUrl);
                case "decode" -> config.put(name, "d-0=" + decodeUrl);
                case "options.*" -> {
                    config.put(name.replace("*", "hold-mode"), "fixed");
                    config.put(name.replace("*", "hold-seconds"), "480");
                }
                default -> config.put(name, value(key));
            }
        }
        return config;
    }

    private static String value(DocumentedKeys.Key key) {
        return Optional.ofNullable(SAMPLES.get(key.name())).or(key::literalDefault).orElseThrow(() ->
                new AssertionError("documented key " + key.name() + " has no single literal default and no sample "
                        + "value in DocumentedConfigurationProfile.SAMPLES"));
    }

    /** A vLLM prefill and decode simulator for the documented route, which needs engines to negotiate with. */
    public static class Engines implements QuarkusTestResourceLifecycleManager {
        private Vertx vertx;

        @Override
        public Map<String, String> start() {
            vertx = Vertx.vertx();
            VllmEngine prefill = engine(Role.PREFILL);
            VllmEngine decode = engine(Role.DECODE);
            return documentedValues(prefill.baseUrl(), decode.baseUrl());
        }

        private VllmEngine engine(Role role) {
            VllmConfig c = new VllmConfig();
            c.role = role;
            c.model = ENGINE_MODEL;
            return new VllmEngine(c).startBlocking(vertx);
        }

        @Override
        public void stop() {
            if (vertx != null) {
                vertx.close().toCompletionStage().toCompletableFuture().join();
            }
        }
    }
}
