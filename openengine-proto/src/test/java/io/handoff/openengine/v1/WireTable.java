package io.handoff.openengine.v1;

import com.google.protobuf.Descriptors.FileDescriptor;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads the tab-separated wire tables in src/test/resources and exposes our generated file descriptors. */
final class WireTable {

    static final String UPSTREAM = "openengine-v1-upstream.tsv";
    static final String ADDITIONS = "handoff-kv-additions.tsv";

    /** The eight files that mirror upstream OpenEngine v1. */
    static final List<String> UPSTREAM_FILES = List.of(
            "generation.proto", "kv.proto", "lifecycle.proto", "server.proto",
            "model.proto", "error.proto", "lora.proto", "openengine.proto");

    /** One data row of a table; {@code cols[0]} is the row kind (message, field, enum, rpc). */
    record Row(String source, int line, String[] cols) {
        String kind() {
            return cols[0];
        }

        String file() {
            return cols[1];
        }

        String col(int i) {
            return i < cols.length ? cols[i] : "";
        }

        @Override
        public String toString() {
            return source + ":" + line + " [" + String.join(" | ", cols) + "]";
        }
    }

    private WireTable() {
    }

    /** Our generated files keyed by short name, e.g. "generation.proto". */
    static Map<String, FileDescriptor> files() {
        Map<String, FileDescriptor> files = new LinkedHashMap<>();
        for (FileDescriptor fd : List.of(
                GenerationProto.getDescriptor(), KvProto.getDescriptor(), LifecycleProto.getDescriptor(),
                ServerProto.getDescriptor(), ModelProto.getDescriptor(), ErrorProto.getDescriptor(),
                LoraProto.getDescriptor(), OpenEngineProto.getDescriptor(),
                KvLifecycleTypesProto.getDescriptor(), KvSessionProto.getDescriptor())) {
            files.put(fd.getName().substring(fd.getName().lastIndexOf('/') + 1), fd);
        }
        return Collections.unmodifiableMap(files);
    }

    static List<Row> read(String resource) {
        InputStream in = WireTable.class.getClassLoader().getResourceAsStream(resource);
        if (in == null) {
            throw new IllegalStateException("missing test resource " + resource);
        }
        List<Row> rows = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String text;
            int line = 0;
            while ((text = r.readLine()) != null) {
                line++;
                if (text.isBlank() || text.startsWith("#")) {
                    continue;
                }
                String[] cols = text.split("\t", -1);
                int expected = switch (cols[0]) {
                    case "message" -> 3;
                    case "enum" -> 5;
                    case "rpc" -> 7;
                    case "field" -> 8;
                    default -> throw new IllegalStateException(resource + ":" + line + ": unknown row kind " + cols[0]);
                };
                if (cols.length != expected) {
                    throw new IllegalStateException(resource + ":" + line + ": expected " + expected
                            + " columns, got " + cols.length + ": " + text);
                }
                rows.add(new Row(resource, line, cols));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (rows.isEmpty()) {
            throw new IllegalStateException(resource + " has no rows");
        }
        return rows;
    }
}
