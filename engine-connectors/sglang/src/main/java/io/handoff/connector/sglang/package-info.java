/**
 * The SGLang connector: Handoff legs on unmodified SGLang servers in PD disaggregation mode
 * ({@code --disaggregation-mode prefill|decode}). Both legs are the client's {@code /v1/completions} request plus
 * the same {@code bootstrap_host}, {@code bootstrap_port} and {@code bootstrap_room}, each with its own fixed-length
 * {@code rid}. The decode connects to the producer's bootstrap server, the producer computes and writes the KV into
 * the decode, and only then answers its own (non-streaming) request; the client's output is the decode's stream.
 * Concurrent and generation-first are native; context-first (prefill, wait, then decode) deadlocks and is refused.
 *
 * <p>The room is minted here, unique among this process's live handoffs (a duplicate crashes SGLang). SGLang does not
 * cancel one leg when the other fails: the gateway calls {@link io.handoff.connector.spi.EngineConnector#abort} for
 * the twin, which posts {@code /abort_request} with the twin's rid and cancels its exchange. Field by field and state
 * by state: {@code mappings/sglang.md}.
 */
package io.handoff.connector.sglang;
