/**
 * The OpenAI-compatible wire shapes all three engine families serve ({@code /v1/completions},
 * {@code /v1/chat/completions}): request parsing into a prompt and sampling settings, and rendering of non-streaming
 * responses and SSE chunks. Each family adds its own fields (vLLM {@code kv_transfer_params}, TensorRT-LLM
 * {@code disaggregated_params} and {@code prompt_token_ids}) and picks the small per-engine differences through
 * {@link io.handoff.simulator.openai.OpenAiWire.Style}.
 */
package io.handoff.simulator.openai;
