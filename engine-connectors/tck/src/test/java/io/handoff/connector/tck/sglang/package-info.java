/** The SGLang connector's contract, against embedded SGLang simulators (a PD pair plus an aggregated reference). */
package io.handoff.connector.tck.sglang;
