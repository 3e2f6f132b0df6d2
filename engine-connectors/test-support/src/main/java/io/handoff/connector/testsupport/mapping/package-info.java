/** The checks every engine family's mapping document ({@code mappings/<family>.mapping.json}) passes against its connector. */
package io.handoff.connector.testsupport.mapping;
