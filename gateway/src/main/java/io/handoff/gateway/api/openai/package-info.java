/**
 * The OpenAI-compatible HTTP front: {@code POST /v1/completions} and {@code GET /v1/models}. A completion runs through
 * the same orchestration as a gRPC Generate (route, style, bypass, session, lease, cleanup); this package only
 * translates the body into a Generate and the events back into OpenAI's JSON and server-sent events.
 */
package io.handoff.gateway.api.openai;
