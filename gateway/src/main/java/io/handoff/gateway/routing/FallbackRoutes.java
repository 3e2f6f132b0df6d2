package io.handoff.gateway.routing;

import java.util.List;

/**
 * The routes a replica serves when none is configured and {@code handoff.demo.enabled} is on: the embedded demo
 * fleet. Routing asks for them through this interface so that it never names what provides them.
 */
public interface FallbackRoutes {

    /** Starts whatever serves the routes, once, and describes them. */
    List<RouteSettings> routes();
}
