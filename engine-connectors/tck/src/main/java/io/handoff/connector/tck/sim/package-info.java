/** The suite's view of embedded simulators: the engines and fleets that families' contract tests start. */
package io.handoff.connector.tck.sim;
