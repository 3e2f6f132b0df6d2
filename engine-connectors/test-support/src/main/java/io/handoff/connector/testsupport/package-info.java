/** What every connector test may share: a clock tests move and a wait for effects an engine applies later. */
package io.handoff.connector.testsupport;
