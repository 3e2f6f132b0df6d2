/** The vLLM connector's contract, against the embedded vLLM simulators in both hold modes. */
package io.handoff.connector.tck.vllm;
