/**
 * Metrics of the session lifecycle and the reaper, and the request's trace (spans, session events, the context
 * forwarded to engines); names and meanings are listed in docs/api.md.
 */
package io.handoff.gateway.telemetry;
