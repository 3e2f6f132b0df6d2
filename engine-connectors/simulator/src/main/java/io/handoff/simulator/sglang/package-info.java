/**
 * A simulated SGLang server ({@code python -m sglang.launch_server --disaggregation-mode prefill|decode}).
 *
 * <p>Both legs carry the same {@code bootstrap_host}, {@code bootstrap_port} and {@code bootstrap_room}. The prefill
 * pins its prompt's KV on arrival and waits in its bootstrap queue until the decode with the same room reaches its
 * bootstrap server ({@code /sim/rendezvous} on the bootstrap port, standing in for the ZMQ/RDMA handshake); the
 * decode may arrive first and waits. Then the prefill computes, "writes" the KV into the decode, answers with
 * {@code finish_reason {"type":"length","length":0}}, and the decode generates (its output includes the prefill's
 * first token). Timeouts: {@code SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT} (prefill) and
 * {@code SGLANG_DISAGGREGATION_WAITING_TIMEOUT} (decode). A duplicate in-flight room crashes the engine; an
 * {@code n>1} request with one scalar room never pairs and hangs until the timeout; a prefill abort does not tell the
 * decode. {@code POST /abort_request} matches rids by prefix and always answers 200.
 *
 * <p>Client cancels by phase ({@code cancelled_*} in {@code /sim/stats}): a closed connection (counted when it closes,
 * even with a {@code disconnect-abort-delay-ms}) or an {@code /abort_request} naming a running rid. The engine's role
 * names the leg: a prefill is cancelled during its prefill until it answered (waiting in the bootstrap queue for its
 * decode included); a decode before its first token while it waits for its prefill's KV, mid-stream once a token went
 * out.
 */
package io.handoff.simulator.sglang;
