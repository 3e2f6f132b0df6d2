/** Admin operations over HTTP (drain), for admin keys only; OpenEngine has no RPC for them. */
package io.handoff.gateway.api.admin;
