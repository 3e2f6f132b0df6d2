/** The checks every engine family's mapping document passes against its connector. */
package io.handoff.connector.testsupport.mapping;
