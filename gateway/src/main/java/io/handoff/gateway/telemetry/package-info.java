/** Metrics of the session lifecycle and the reaper; names and meanings are listed in docs/api.md. */
package io.handoff.gateway.telemetry;
