package io.handoff.gateway.control;

import io.handoff.gateway.testing.ControlPlaneProfile;

/**
 * The control-plane profile in a gateway of its own, shared by the tests that reload its routes (they change the
 * table every other test of the control plane serves from).
 */
public class RouteReloadProfile extends ControlPlaneProfile {
}
