package io.handoff.gateway.session;

import io.handoff.gateway.testing.RedisAcl;
import io.handoff.gateway.testing.RedisServer;
import io.handoff.gateway.testing.SecuredRedisProfile;
import io.handoff.gateway.testing.SecuredRedisTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The packaged configuration path an operator uses (docs/reliability.md, "Redis topologies"): the gateway's own
 * Quarkus Redis client, given {@code rediss://handoff:<password>@host:port} and a TLS configuration trusting the
 * authority, reaches Redis over TLS as the documented ACL user, and readiness, sessions and the reaper all work.
 */
@QuarkusTest
@TestProfile(SecuredRedisProfile.class)
class SecuredRedisGatewayTest {

    @Inject
    Redis gatewayClient;

    @Test
    void theGatewayServesSessionsFromRedisOverTlsAsTheDocumentedUser() {
        try {
            gatewayClient.send(Request.cmd(Command.PING)).await().atMost(Duration.ofSeconds(10));
        } catch (RuntimeException e) {
            // the store's own answer hides the driver's words (they name Redis's address); a test may show them
            fail("the gateway's Redis client cannot reach Redis: " + e, e);
        }
        RestAssured.get("/q/health/ready").then().statusCode(200);
        String id = RestAssured.given().contentType(ContentType.JSON).header("Idempotency-Key", "k-secured")
                .body("{\"request_id\":\"r1\",\"model\":\"demo\"}").post("/v1/kv-sessions").then().statusCode(201)
                .extract().path("id");
        RestAssured.get("/v1/kv-sessions/" + id).then().statusCode(200).body("state", equalTo("allocated"));

        RedisServer server = SecuredRedisTestResource.server();
        assertFalse(server.reply("KEYS", SecuredRedisTestResource.keyPrefix() + ":*").isEmpty(),
                "the session is in Redis under the configured prefix");
        List<String> storeConnections = server.reply("CLIENT", "LIST").lines()
                .filter(line -> line.contains(" user=" + RedisAcl.USER + " ")).toList();
        assertFalse(storeConnections.isEmpty(), "the gateway connects as " + RedisAcl.USER);
        for (String connection : storeConnections) {
            assertTrue(connection.contains(" laddr=127.0.0.1:" + server.tlsPort() + " "),
                    "the gateway's connection is to the TLS port: " + connection);
        }
        assertEquals("", server.reply("ACL", "LOG"), "denied to " + RedisAcl.documentedLine());
    }
}
