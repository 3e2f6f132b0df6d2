/** The contract suite's view of the embedded simulators, for the simulated fleets each family's contract test starts. */
package io.handoff.connector.tck.sim;
