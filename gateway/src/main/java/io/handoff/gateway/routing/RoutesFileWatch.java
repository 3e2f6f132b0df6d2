package io.handoff.gateway.routing;

import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Watches {@code handoff.routes-file} (for example the routes ConfigMap, mounted as a file) and reloads its routes
 * when its text changes, exactly as the admin call does: negotiated whole, refused whole. A version of the file is
 * tried once: a refused one is logged and counted ({@code handoff.routes.reloads}, source {@code file}) and the
 * routes serving stay until the file changes again. It is read when the gateway starts (a file with the routes the
 * gateway started with changes nothing) and then every {@code handoff.routes-file-poll} on the gateway's clock:
 * a timer looks at the clock every second at most, so a test moves the clock instead of waiting. A file that is
 * missing or unreadable is logged (once until it changes) and changes nothing.
 */
@ApplicationScoped
public class RoutesFileWatch {

    private static final Logger LOG = Logger.getLogger(RoutesFileWatch.class);

    /** How often the timer looks at the clock at most. */
    private static final Duration TICK = Duration.ofSeconds(1);

    private final Optional<Path> file;
    private final Duration period;
    private final RouteRegistry routes;
    private final Clock clock;
    private final Vertx vertx;
    private String lastText;
    private String lastProblem;
    private Instant nextPoll = Instant.MIN;
    private volatile long timer = -1;

    public RoutesFileWatch(RoutingConfig config, RouteRegistry routes, Clock clock, Vertx vertx) {
        this.file = config.routesFile().filter(f -> !f.isBlank()).map(Path::of);
        this.period = config.routesFilePoll();
        this.routes = routes;
        this.clock = clock;
        this.vertx = vertx;
    }

    void start(@Observes StartupEvent event) {
        if (file.isEmpty()) {
            return;
        }
        if (period.isZero() || period.isNegative()) {
            throw new IllegalArgumentException("handoff.routes-file-poll: " + period + " must be above zero");
        }
        LOG.infof("routes file %s: read every %s", file.get(), period);
        long tick = Math.max(1, Math.min(period.toMillis(), TICK.toMillis()));
        timer = vertx.setPeriodic(0, tick, id -> {
            if (!clock.instant().isBefore(dueAt())) {
                vertx.executeBlocking(this::poll, false);
            }
        });
    }

    private synchronized Instant dueAt() {
        return nextPoll;
    }

    @PreDestroy
    void stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }

    /**
     * Reads the file now and reloads its routes if its text changed since the last read. Empty when there is no file
     * to watch, it cannot be read, or its text did not change.
     */
    public synchronized Optional<RouteReload> poll() {
        if (file.isEmpty()) {
            return Optional.empty();
        }
        nextPoll = clock.instant().plus(period);
        String text;
        try {
            text = Files.readString(file.get());
        } catch (NoSuchFileException e) {
            problem("routes file " + file.get() + " is not there; the routes serving stay");
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            problem("routes file " + file.get() + " cannot be read (" + e.getMessage() + "); the routes serving stay");
            return Optional.empty();
        }
        lastProblem = null;
        if (text.equals(lastText)) {
            return Optional.empty();
        }
        lastText = text;
        return Optional.of(routes.reload(text, "file"));
    }

    private void problem(String message) {
        if (!message.equals(lastProblem)) {
            LOG.warn(message);
            lastProblem = message;
        }
        lastText = null;
    }
}
