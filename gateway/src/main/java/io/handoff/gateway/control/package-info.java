/**
 * The control plane over the fleet: what the deployment can do ({@code ServerInfoAssembler}: intersection of the
 * session policy and every route's connector), how it is doing ({@code FleetSampler} samples every endpoint's native
 * surface, each probe under its pool's SmallRye Fault Tolerance guard (routing's {@code ProbeGuard}: a timeout, one
 * more try of a lost probe), and the store off the hot path; {@code FleetHealth}, {@code LoadReporter} read the
 * samples), stopping work ({@code AbortService}) and draining the deployment ({@code Drain}, its mark shared through
 * the store). The gRPC and HTTP adapters in {@code api} stay thin.
 */
package io.handoff.gateway.control;
