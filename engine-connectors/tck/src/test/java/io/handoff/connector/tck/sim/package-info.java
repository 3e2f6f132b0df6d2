/** The contract suite's view of the embedded simulators, shared by every family's contract test. */
package io.handoff.connector.tck.sim;
