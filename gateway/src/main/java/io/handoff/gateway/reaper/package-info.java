/**
 * Finds sessions that are due and acts on each once: expires lapsed leases, discharges cleanup obligations
 * through the {@link io.handoff.gateway.reaper.CleanupPort} under a fenced claim, purges tombstones. Every replica
 * may run it; the store's fenced steps make each action happen once.
 */
package io.handoff.gateway.reaper;
