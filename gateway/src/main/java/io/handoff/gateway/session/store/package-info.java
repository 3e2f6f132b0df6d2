/**
 * Where sessions live: the {@link io.handoff.gateway.session.store.SessionStore} contract, the in-memory store for
 * one replica, the Redis store for many (Lua scripts in {@code src/main/resources/redis}, over connections kept per
 * event loop: one pipelined connection per loop on one Redis server, a pool per loop otherwise), and the producer
 * that picks one from configuration. Both stores pass the same contract suite.
 */
package io.handoff.gateway.session.store;
