/**
 * The gRPC north side: openengine.v1 OpenEngineKv, Control and Inference, the translation between their messages
 * and the session core, and the one mapping of refusals to gRPC statuses.
 */
package io.handoff.gateway.api.grpc;
