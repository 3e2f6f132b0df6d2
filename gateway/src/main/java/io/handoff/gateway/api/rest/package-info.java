/**
 * The REST mirror of OpenEngineKv at {@code /v1/kv-sessions}, for callers that speak HTTP+JSON rather than gRPC
 * (routers, scripts, OpenAI-style SDK plumbing). It adds no semantics of its own: requests become the same
 * openengine.v1 messages the gRPC service receives and go through {@link io.handoff.gateway.api.openengine}, and
 * refusals map to HTTP through one table ({@link io.handoff.gateway.api.rest.HttpStatuses}) into the OpenAI error
 * shape, so the two APIs cannot disagree.
 */
package io.handoff.gateway.api.rest;
