/**
 * The openengine.v1 KV session messages and what they mean, independent of transport. The gRPC service and the
 * REST mirror both translate through here, so the two APIs cannot drift apart in semantics or in the error codes
 * they report.
 */
package io.handoff.gateway.api.openengine;
