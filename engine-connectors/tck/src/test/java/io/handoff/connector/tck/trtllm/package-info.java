/** The TensorRT-LLM connector's contract and generation-first lifecycle, against embedded trtllm-serve simulators. */
package io.handoff.connector.tck.trtllm;
