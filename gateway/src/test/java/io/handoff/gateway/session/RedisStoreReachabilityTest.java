package io.handoff.gateway.session;

import io.handoff.gateway.session.store.RedisDeployment;
import io.handoff.gateway.session.store.RedisSessionStore;
import io.handoff.gateway.session.store.StoreSettings;
import io.handoff.gateway.testing.RedisServer;
import io.handoff.gateway.testing.TestRedisClients;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** An operator learns from the log why the store stopped answering, once per outage, and when it answers again. */
class RedisStoreReachabilityTest {

    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private final Logger logger = Logger.getLogger(RedisSessionStore.class.getName());

    private RedisServer server;
    private TestRedisClients clients;
    private RedisSessionStore store;

    @BeforeEach
    void start() {
        server = RedisServer.startOnFreePort();
        clients = new TestRedisClients(server);
        store = new RedisSessionStore(clients.newClient(), "reach", new StoreSettings(Duration.ofMinutes(10), 100),
                Duration.ofSeconds(2), RedisDeployment.SINGLE_NODE);
        logger.addHandler(capture);
    }

    @AfterEach
    void stop() {
        logger.removeHandler(capture);
        clients.close();
        server.stop();
    }

    private List<String> messages(Level level) {
        return records.stream().filter(r -> r.getLevel().equals(level)).map(LogRecord::getMessage).toList();
    }

    @Test
    void anOutageIsOneWarningWithTheDriversReasonAndTheRecoveryOneLine() {
        store.ping().await().atMost(Duration.ofSeconds(5));
        assertEquals(List.of(), messages(Level.WARNING), "nothing to say while it answers");

        server.stop();
        for (int i = 0; i < 5; i++) {
            SessionException e = assertThrows(SessionException.class,
                    () -> store.ping().await().atMost(Duration.ofSeconds(5)));
            assertEquals(SessionFailure.STORE_UNAVAILABLE, e.failure());
        }

        List<String> warnings = messages(Level.WARNING);
        assertEquals(1, warnings.size(), "one warning for the outage, not one per request: " + warnings);
        assertTrue(warnings.get(0).contains("unreachable: "), warnings.get(0));
        assertTrue(warnings.get(0).length() > "the session store (Redis) is unreachable: ".length() + 10,
                "the warning carries the driver's reason: " + warnings.get(0));

        server.start();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
            try {
                store.ping().await().atMost(Duration.ofSeconds(5));
                return true;
            } catch (SessionException stillDown) {
                return false;
            }
        });
        assertTrue(messages(Level.INFO).stream().anyMatch(m -> m.contains("answers again")), records.toString());
        assertEquals(1, messages(Level.WARNING).size());
    }
}
