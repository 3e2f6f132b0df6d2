/**
 * What the connector of every OpenAI-compatible family (vLLM, SGLang, TensorRT-LLM) is built on: the route's options
 * read with errors that name the route and the option ({@link io.handoff.connector.openai.family.RouteOptions}), and
 * the wiring each family's connector shares: one HTTP client per route, the route's capabilities and the gateway's
 * clock ({@link io.handoff.connector.openai.family.OpenAiHttpConnector}).
 *
 * <p>Engine-neutral like the rest of the module: a family passes its name in, and everything its engines do their own
 * way (bodies, legs, holds, probes) stays in the family's connector.
 */
package io.handoff.connector.openai.family;
