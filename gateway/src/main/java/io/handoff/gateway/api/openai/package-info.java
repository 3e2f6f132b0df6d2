/**
 * The OpenAI-compatible HTTP front: {@code POST /v1/completions}, {@code POST /v1/chat/completions} and
 * {@code GET /v1/models}. A completion or a chat runs through the same orchestration as a gRPC Generate (route,
 * style, bypass, session, lease, cleanup); this package only translates the body into a Generate and the events
 * back into OpenAI's JSON and server-sent events. A chat stays a chat down to the engines (their chat endpoint and
 * their own template), carried as a Generate with {@code extra.messages} and no prompt.
 */
package io.handoff.gateway.api.openai;
