/**
 * Test helpers for connectors of engines with an OpenAI-compatible HTTP API: WireMock stand-ins for a prefill and a
 * decode engine, the reference answer of a real engine, and the checks of their keyed mapping documents.
 */
package io.handoff.connector.testsupport.openai;
