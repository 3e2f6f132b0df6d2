package io.handoff.gateway.demo;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.orchestration.RequestLog;
import io.handoff.gateway.routing.FallbackRoutes;
import io.handoff.gateway.routing.RouteSettings;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimEngine;
import io.handoff.simulator.SimFleet;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;
import org.jboss.logmanager.LogContext;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.logging.Level;

/**
 * The embedded default: one simulated prefill and decode engine of each HTTP family, in this process on free ports,
 * and one route per family with the styles its engine supports natively, so that a newcomer can send a Generate
 * with nothing else installed. Started only when routing asks for it (no route is configured).
 */
@ApplicationScoped
public class DemoFleet implements FallbackRoutes {

    public static final String MODEL = "sim-model";
    private static final Logger LOG = Logger.getLogger(DemoFleet.class);

    private final Vertx vertx;
    private SimFleet fleet;
    private List<RouteSettings> routes;

    public DemoFleet(Vertx vertx) {
        this.vertx = vertx;
    }

    @Override
    public synchronized List<RouteSettings> routes() {
        if (routes == null) {
            fleet = SimFleet.start(vertx, 0, Map.of("model", MODEL, "token-interval-ms", "20"),
                    SimFleet.DEFAULT_FAMILIES);
            LOG.info("no routes configured: started the embedded demo fleet of simulated engines");
            // a newcomer should watch each handoff happen: the per-request log is on while the demo fleet runs
            LogContext.getLogContext().getLogger(RequestLog.NAME).setLevel(Level.INFO);
            fleet.describe().forEach(line -> LOG.info("  " + line));
            routes = List.of(
                    route("demo-vllm", Family.VLLM, ScheduleStyle.CONTEXT_FIRST, Set.of(ScheduleStyle.CONTEXT_FIRST),
                            Map.of("hold-mode", "fixed", "hold-seconds", "480")),
                    route("demo-sglang", Family.SGLANG, ScheduleStyle.CONCURRENT,
                            Set.of(ScheduleStyle.CONCURRENT, ScheduleStyle.GENERATION_FIRST),
                            Map.of("bootstrap-port", Integer.toString(fleet.get(Family.SGLANG, Role.PREFILL)
                                    .auxPort("bootstrap")))),
                    route("demo-trtllm", Family.TRTLLM, ScheduleStyle.CONTEXT_FIRST,
                            Set.of(ScheduleStyle.CONTEXT_FIRST, ScheduleStyle.GENERATION_FIRST),
                            Map.of("schedule-styles", "context-first,generation-first")));
        }
        return routes;
    }

    private RouteSettings route(String name, Family family, ScheduleStyle defaultStyle, Set<ScheduleStyle> styles,
            Map<String, String> options) {
        SimEngine prefill = fleet.get(family, Role.PREFILL);
        SimEngine decode = fleet.get(family, Role.DECODE);
        return RouteSettings.builder(name, name, family.wire()).engineModel(MODEL)
                .prefill(List.of(Endpoint.of("prefill-0", prefill.baseUrl())))
                .decode(List.of(Endpoint.of("decode-0", decode.baseUrl())))
                .defaultStyle(defaultStyle).styles(styles)
                .decodeAttempts(1) // one decode endpoint per route: there is nowhere else to go
                .options(options).build();
    }

    /** The simulated engine behind an endpoint URI, for tests and the demo's own stats. */
    public synchronized Optional<SimEngine> engine(Endpoint endpoint) {
        return fleet == null ? Optional.empty() : fleet.engines().stream()
                .filter(e -> e.baseUrl().equals(endpoint.uri().toString())).findFirst();
    }

    /** The simulated engines, once started. */
    public synchronized Optional<SimFleet> fleet() {
        return Optional.ofNullable(fleet);
    }

    @PreDestroy
    synchronized void close() {
        if (fleet != null) {
            fleet.close();
        }
    }
}
