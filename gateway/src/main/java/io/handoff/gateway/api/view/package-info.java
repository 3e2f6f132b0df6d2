/**
 * The operator's live view at {@code /handoff}: a static page (under {@code META-INF/resources/handoff}) that polls
 * one JSON document, {@code /handoff/state}, assembled here from the routes, the fleet samples, the store (bounded
 * reads only) and this replica's last handoffs. Read-only; an admin key is needed while auth is on.
 */
package io.handoff.gateway.api.view;
