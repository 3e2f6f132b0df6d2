/**
 * The edge under attack: a seeded fuzzer that sends generated bad inputs to both fronts (the HTTP APIs and the gRPC
 * services, raw bytes on the wire), the limits of both listeners, the management interface, and tenant isolation on
 * every path. Each bad input must be refused with a clear error and change nothing.
 */
package io.handoff.gateway.api.edge;
