package io.handoff.connector.vllm;

/** Which NixlConnector generation the route's producers run: it decides how long parked KV is held. */
public enum HoldMode {
    /** Builds before vLLM PR #41383: {@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT} from the end of the prefill, no renewal. */
    FIXED,
    /** Newer builds: {@code kv_lease_duration}, renewed by the consumer's heartbeats once it has the request. */
    LEASE
}
