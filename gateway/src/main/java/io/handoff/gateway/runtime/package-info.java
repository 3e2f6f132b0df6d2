/**
 * Process-wide plumbing every room shares: the injected clock, this replica's identity, and the guard that keeps
 * internal addresses out of text a client reads.
 */
package io.handoff.gateway.runtime;
