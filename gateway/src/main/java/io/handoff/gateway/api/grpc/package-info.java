/**
 * The gRPC north side: openengine.v1 OpenEngineKv, Control and Inference, and the one mapping of refusals to gRPC
 * statuses. What the messages mean is in {@link io.handoff.gateway.api.openengine}, shared with the REST mirror.
 */
package io.handoff.gateway.api.grpc;
