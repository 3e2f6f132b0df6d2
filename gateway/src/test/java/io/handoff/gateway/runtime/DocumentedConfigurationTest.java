package io.handoff.gateway.runtime;

import io.handoff.gateway.routing.BypassPolicy;
import io.handoff.gateway.routing.EndpointPolicy;
import io.handoff.gateway.routing.PromptPrefix;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.testing.DocumentedKeys;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.ConfigMappings.ConfigClass;
import io.smallrye.config.ConfigMappings;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The documented configuration is the configuration: the gateway starts with every documented key set (the profile),
 * what it was given is what it uses, and every {@code handoff.} key the code reads is documented.
 */
@QuarkusTest
@TestProfile(DocumentedConfigurationProfile.class)
class DocumentedConfigurationTest {

    @Inject
    ReplicaIdentity replica;

    @Inject
    RouteRegistry routes;

    @Test
    void theGatewayRunsWithEveryDocumentedKeySetAndUsesWhatItWasGiven() {
        assertEquals(DocumentedConfigurationProfile.REPLICA_ID, replica.id());
        Route route = routes.forModel("documented-alias").orElseThrow();
        assertEquals(DocumentedConfigurationProfile.ROUTE, route.name());
        assertEquals(DocumentedConfigurationProfile.ENGINE_MODEL, route.settings().engineModel());
        assertEquals(12, route.settings().bypass().shortPromptTokens());
        assertEquals(48, route.settings().bypass().uncachedPromptTokens());
        assertTrue(route.settings().bypass().has(BypassPolicy.Trigger.UNCACHED_PROMPT));
        assertEquals(131072, route.settings().bypass().decodeCacheTokens());
        assertEquals(Duration.ofSeconds(20), route.settings().leaseDefault().orElseThrow());
        assertEquals(77, route.settings().maxInFlight());
        assertEquals(3, route.settings().queueMaxWaiting());
        assertEquals(Duration.ofSeconds(5), route.settings().queueTimeout());
        assertEquals(4, route.settings().breakerFailures());
        assertEquals(EndpointPolicy.PREFIX_AFFINITY, route.settings().prefillPolicy());
        assertEquals(EndpointPolicy.POWER_OF_TWO, route.settings().decodePolicy());
        assertEquals(new PromptPrefix(16, 4), route.settings().prefix());
    }

    @Test
    void everyKeyTheCodeReadsIsDocumentedAndEveryDocumentedKeyIsRead() {
        Set<String> read = new TreeSet<>();
        for (Class<?> mapping : mappings()) {
            String prefix = mapping.getAnnotation(ConfigMapping.class).prefix();
            ConfigMappings.getProperties(ConfigClass.configClass(mapping, prefix)).keySet().stream()
                    .map(DocumentedConfigurationTest::normalized).forEach(read::add);
        }
        Set<String> documented = Stream.concat(DocumentedKeys.readme().stream(), DocumentedKeys.routes().stream())
                .map(DocumentedKeys.Key::name).map(DocumentedConfigurationTest::normalized)
                .filter(k -> !k.equals("handoff.routes.*.*")) // README's pointer to the routes table
                .collect(Collectors.toCollection(TreeSet::new));

        Set<String> undocumented = new TreeSet<>(read);
        undocumented.removeAll(documented);
        assertEquals(Set.of(), undocumented, "keys the gateway reads that README and docs/api.md do not document");
        Set<String> unread = new TreeSet<>(documented);
        unread.removeAll(read);
        assertEquals(Set.of(), unread, "documented keys that no configuration mapping reads");
        assertTrue(read.contains("handoff.replica-id"), read.toString());
    }

    /**
     * Placeholders become the mapping's {@code *} ({@code handoff.routes.<name>.model} is {@code handoff.routes.*.model})
     * and a list's index is dropped ({@code styles[*]} is {@code styles}).
     */
    private static String normalized(String key) {
        return key.replaceAll("<[^>]+>", "*").replace("[*]", "");
    }

    /** Every configuration mapping of the gateway's own under {@code handoff.}, found among its compiled classes. */
    private static List<Class<?>> mappings() {
        Path classes;
        try {
            classes = Path.of(ReplicaIdentity.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        try (Stream<Path> files = Files.walk(classes)) {
            List<Class<?>> found = files.map(classes::relativize).map(Path::toString)
                    .filter(p -> p.endsWith(".class") && !p.contains("$"))
                    .map(p -> p.substring(0, p.length() - ".class".length()).replace('/', '.'))
                    .map(DocumentedConfigurationTest::load)
                    .filter(c -> c.isAnnotationPresent(ConfigMapping.class)
                            && c.getAnnotation(ConfigMapping.class).prefix().startsWith("handoff"))
                    .collect(Collectors.toList());
            assertTrue(found.size() >= 5, "configuration mappings found: " + found);
            return found;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Class<?> load(String name) {
        try {
            return Class.forName(name, false, DocumentedConfigurationTest.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }
}
