/** Process-wide plumbing every room shares: the injected clock and this replica's identity. */
package io.handoff.gateway.runtime;
