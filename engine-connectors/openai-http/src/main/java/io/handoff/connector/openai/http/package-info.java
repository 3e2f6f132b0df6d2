/**
 * Non-blocking HTTP for engines that speak the OpenAI-compatible API: one Vert.x client wrapper
 * ({@link io.handoff.connector.openai.http.EngineHttpClient}) for JSON calls, Server-Sent Event streams and plain
 * GETs; the SSE decoder; the translation of HTTP failures into {@link io.handoff.connector.spi.EngineException}
 * with the right code, retryable flag and sent-to-engine flag; and for discovery, the replies of probe GETs
 * ({@link io.handoff.connector.openai.http.ProbeReply}) and a small Prometheus text reader.
 *
 * <p>Engine-neutral on purpose: nothing here names an engine family. Per-family rules (which failures a family
 * may retry) live in the family's connector.
 */
package io.handoff.connector.openai.http;
