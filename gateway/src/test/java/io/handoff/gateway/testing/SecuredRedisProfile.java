package io.handoff.gateway.testing;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;

/** The gateway on Redis over TLS as the documented ACL user ({@link SecuredRedisTestResource}), no demo fleet. */
public class SecuredRedisProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("handoff.demo.enabled", "false");
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(SecuredRedisTestResource.class));
    }
}
