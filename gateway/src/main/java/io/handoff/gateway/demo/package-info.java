/**
 * The embedded demo fleet: with no route configured, simulated engines of each family start inside the gateway's
 * process, with one route each, so that the run command works with nothing else installed. The only package of
 * the gateway's main code that may import the simulator.
 */
package io.handoff.gateway.demo;
