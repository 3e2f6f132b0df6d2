/**
 * The KV session: its states and the one table of legal moves ({@link io.handoff.gateway.session.SessionTransitions}),
 * the session record, cleanup obligations, and the service that validates every request before the store is
 * touched. Protocol-free: the north-side APIs translate to and from it.
 */
package io.handoff.gateway.session;
