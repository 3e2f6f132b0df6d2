package io.handoff.connector.testsupport.mapping;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.connector.spi.ConnectorCapabilities;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * Holds a family's mapping document against what its connector declares and sends, so that the document cannot
 * drift from the code: the document names every {@code GenerateRequest} field there is; its native fields are the
 * ones the connector declares; each native field, set alone, arrives where the document says on every leg; each
 * refused field is refused before anything is sent; each field the gateway consumes never reaches an engine.
 *
 * <p>A family's mapping test subclasses it: it reads its document (from the test classpath, see
 * {@link #documentText(String)}), runs the legs against stand-in engines that record what they receive, and keeps
 * its family-specific cases (leg shapes, chat, styles) beside these.
 */
public abstract class MappingDocumentContract {

    /** What a mapping document says the connector does with one request field. */
    protected enum Disposition {
        /** Carried to the engines at a native place. */
        NATIVE,
        /** Refused by {@code plan()} (and by a bypass) before anything is sent. */
        REFUSED,
        /** Accepted and consumed by the gateway; never sent. */
        GATEWAY
    }

    /** Every field path of {@code GenerateRequest}, spelled as the family's document spells them. */
    protected abstract Set<String> requestFieldPaths();

    /** The field paths the document names. */
    protected abstract Set<String> documentedFieldPaths();

    /** The document's entries of one disposition, by field path, in a stable order. */
    protected abstract Map<String, JsonNode> fields(Disposition disposition);

    protected abstract ConnectorCapabilities capabilities();

    /** Sends the entry's sample through the legs and asserts it arrives where the entry says, on each leg. */
    protected abstract void assertArrivesAsMapped(String path, JsonNode entry) throws Exception;

    /** Asserts that the entry's sample is refused (as the entry says) before anything is sent. */
    protected abstract void assertRefusedBeforeSending(String path, JsonNode entry) throws Exception;

    /** Sends the entry's sample through the legs and asserts that the field reached no engine. */
    protected abstract void assertNeverSent(String path, JsonNode entry) throws Exception;

    /** How many requests the stand-in engines have received since the test began. */
    protected abstract int requestsSent();

    /** The text of {@code mappings/<family>.mapping.json}, which the family's pom puts on the test classpath. */
    protected static String documentText(String family) {
        String name = "/mappings/" + family + ".mapping.json";
        try (InputStream in = MappingDocumentContract.class.getResourceAsStream(name)) {
            assertNotNull(in, "mappings/" + family + ".mapping.json is not on the test classpath (see the pom)");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void theDocumentNamesEveryRequestField() {
        assertEquals(requestFieldPaths(), documentedFieldPaths(), "the document must name every request field");
    }

    @Test
    void theNativeFieldsAreTheDeclaredRequestFields() {
        assertEquals(fields(Disposition.NATIVE).keySet(), capabilities().requestFields());
    }

    @TestFactory
    Stream<DynamicTest> mappedFieldsLandAtTheirNativePath() {
        Map<String, JsonNode> natives = fields(Disposition.NATIVE);
        assertFalse(natives.isEmpty(), "the document maps no field natively");
        return natives.entrySet().stream().map(e -> DynamicTest.dynamicTest(e.getKey(),
                () -> assertArrivesAsMapped(e.getKey(), e.getValue())));
    }

    @TestFactory
    Stream<DynamicTest> refusedFieldsAreRefusedBeforeAnythingIsSent() {
        Map<String, JsonNode> refused = fields(Disposition.REFUSED);
        assertFalse(refused.isEmpty(), "the document refuses no field");
        return refused.entrySet().stream().map(e -> DynamicTest.dynamicTest(e.getKey(), () -> {
            assertRefusedBeforeSending(e.getKey(), e.getValue());
            assertEquals(0, requestsSent(), "nothing may be sent for a refused request");
        }));
    }

    @TestFactory
    Stream<DynamicTest> gatewayFieldsAreNeverSent() {
        return fields(Disposition.GATEWAY).entrySet().stream().map(e -> DynamicTest.dynamicTest(e.getKey(),
                () -> assertNeverSent(e.getKey(), e.getValue())));
    }
}
