/**
 * Admin operations over HTTP (drain; the route table, listed and reloaded; the endpoints of a route's pools,
 * listed, added and retired), for admin keys only, and the one admin-key check every admin surface uses (the live
 * view's too); OpenEngine has no RPC for them.
 */
package io.handoff.gateway.api.admin;
