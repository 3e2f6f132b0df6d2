/** What every connector test may share: a clock tests move, a wait for what engines do later, protobuf from JSON. */
package io.handoff.connector.testsupport;
