/**
 * One Generate, run as a disaggregated request: admission (validation, route, style, bypass, endpoints, session) is
 * separate from the run (the legs in the style's order, the relay of the decode stream, and exactly one ending of
 * the session), so that nothing is allocated for a request that is refused, and every accepted request ends its
 * session once: COMPLETE, FAILED, CANCELLED, or RELEASED when the request finished during its prefill.
 * A route that is full may let a request wait for a slot in its admission queue, before anything is taken.
 */
package io.handoff.gateway.orchestration;
