package io.handoff.openengine.v1;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.GenericDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Checks the generated descriptors against the upstream OpenEngine v1 facts table (one dynamic test per row)
 * and against our KV session additions table, and guards the numbering rules for additions.
 */
class WireCompatibilityTest {

    private static final String PACKAGE = "openengine.v1";
    private static final int FIRST_ADDITION_NUMBER = 100;
    private static final Map<String, FileDescriptor> FILES = WireTable.files();

    @TestFactory
    Stream<DynamicTest> upstreamRows() {
        return rowTests(WireTable.read(WireTable.UPSTREAM));
    }

    @TestFactory
    Stream<DynamicTest> handoffAdditionRows() {
        return rowTests(WireTable.read(WireTable.ADDITIONS));
    }

    private static Stream<DynamicTest> rowTests(List<WireTable.Row> rows) {
        return rows.stream().map(row -> DynamicTest.dynamicTest(row.toString(), () -> {
            List<String> problems = check(row);
            if (!problems.isEmpty()) {
                fail("row " + row + " broke: " + String.join("; ", problems));
            }
        }));
    }

    /** Returns what is wrong with one row, empty if it matches the generated schema. */
    static List<String> check(WireTable.Row row) {
        List<String> p = new ArrayList<>();
        FileDescriptor file = FILES.get(row.file());
        if (file == null) {
            p.add("no generated file " + row.file());
            return p;
        }
        switch (row.kind()) {
            case "message" -> {
                if (file.findMessageTypeByName(row.col(2)) == null) {
                    p.add("message " + row.col(2) + " not declared in " + row.file());
                }
            }
            case "field" -> checkField(file, row, p);
            case "enum" -> {
                EnumDescriptor e = file.findEnumTypeByName(row.col(2));
                if (e == null) {
                    p.add("enum " + row.col(2) + " not declared in " + row.file());
                    break;
                }
                EnumValueDescriptor v = e.findValueByName(row.col(3));
                if (v == null) {
                    p.add("enum value " + row.col(3) + " missing");
                } else if (v.getNumber() != Integer.parseInt(row.col(4))) {
                    p.add("enum value " + row.col(3) + " has number " + v.getNumber() + ", expected " + row.col(4));
                }
            }
            case "rpc" -> {
                ServiceDescriptor s = file.findServiceByName(row.col(2));
                if (s == null) {
                    p.add("service " + row.col(2) + " not declared in " + row.file());
                    break;
                }
                MethodDescriptor m = s.findMethodByName(row.col(3));
                if (m == null) {
                    p.add("rpc " + row.col(3) + " missing");
                    break;
                }
                expect(p, "request type", row.col(4), typeName(m.getInputType()));
                expect(p, "response type", row.col(5), typeName(m.getOutputType()));
                expect(p, "server streaming", row.col(6), String.valueOf(m.isServerStreaming()));
                expect(p, "client streaming", "false", String.valueOf(m.isClientStreaming()));
                expect(p, "full service name", PACKAGE + "." + row.col(2), s.getFullName());
            }
            default -> p.add("unknown row kind " + row.kind());
        }
        return p;
    }

    private static void checkField(FileDescriptor file, WireTable.Row row, List<String> p) {
        Descriptor msg = file.findMessageTypeByName(row.col(2));
        if (msg == null) {
            p.add("message " + row.col(2) + " not declared in " + row.file());
            return;
        }
        FieldDescriptor f = msg.findFieldByName(row.col(3));
        if (f == null) {
            p.add("field " + row.col(3) + " missing");
            return;
        }
        int number = Integer.parseInt(row.col(4));
        expect(p, "number", String.valueOf(number), String.valueOf(f.getNumber()));
        FieldDescriptor byNumber = msg.findFieldByNumber(number);
        if (byNumber != f) {
            p.add("number " + number + " belongs to " + (byNumber == null ? "no field" : byNumber.getName()));
        }
        expect(p, "type", row.col(5), typeName(f));
        boolean proto3Optional = f.toProto().getProto3Optional();
        String label = f.isRepeated() ? "repeated" : proto3Optional ? "optional" : "singular";
        expect(p, "label", row.col(6), label);
        if (f.isMapField()) {
            p.add("is a map field");
        }
        if ("optional".equals(row.col(6)) && !f.hasPresence()) {
            p.add("optional field has no presence");
        }
        if (proto3Optional && (f.getContainingOneof() == null || f.getRealContainingOneof() != null)) {
            p.add("proto3 optional without its synthetic oneof");
        }
        OneofDescriptor oneof = f.getRealContainingOneof();
        expect(p, "oneof", row.col(7), oneof == null ? "" : oneof.getName());
    }

    private static void expect(List<String> p, String what, String expected, String actual) {
        if (!expected.equals(actual)) {
            p.add(what + " is '" + actual + "', expected '" + expected + "'");
        }
    }

    /** Type as written in the tables: scalar keyword, simple name in our package, full name otherwise. */
    static String typeName(FieldDescriptor f) {
        return switch (f.getType()) {
            case MESSAGE -> typeName(f.getMessageType());
            case ENUM -> typeName(f.getEnumType());
            default -> f.getType().name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    static String typeName(GenericDescriptor d) {
        return PACKAGE.equals(d.getFile().getPackage()) ? d.getName() : d.getFullName();
    }

    @Test
    void upstreamMessagesHaveNoUnlistedFieldBelow100AndAdditionsStayOutOfUpstreamOneofs() {
        List<WireTable.Row> rows = WireTable.read(WireTable.UPSTREAM);
        Map<String, Set<String>> listed = new HashMap<>();
        for (WireTable.Row r : rows) {
            if (r.kind().equals("message")) {
                listed.computeIfAbsent(r.col(2), k -> new HashSet<>());
            } else if (r.kind().equals("field")) {
                listed.computeIfAbsent(r.col(2), k -> new HashSet<>()).add(r.col(3));
            }
        }
        List<String> problems = new ArrayList<>();
        int additions = 0;
        for (String file : WireTable.UPSTREAM_FILES) {
            for (Descriptor msg : FILES.get(file).getMessageTypes()) {
                Set<String> upstreamFields = listed.get(msg.getName());
                if (upstreamFields == null) {
                    continue; // reported by upstreamFilesDeclareOnlyUpstreamTypes
                }
                if (!msg.getNestedTypes().isEmpty() || !msg.getEnumTypes().isEmpty()) {
                    problems.add(msg.getName() + " declares nested types, upstream has none");
                }
                for (FieldDescriptor f : msg.getFields()) {
                    if (upstreamFields.contains(f.getName())) {
                        continue;
                    }
                    additions++;
                    if (f.getNumber() < FIRST_ADDITION_NUMBER) {
                        problems.add(msg.getName() + "." + f.getName() + " = " + f.getNumber()
                                + " is not in the upstream table and squats on an upstream number (< "
                                + FIRST_ADDITION_NUMBER + ")");
                    }
                    OneofDescriptor o = f.getRealContainingOneof();
                    if (o != null) {
                        problems.add(msg.getName() + "." + f.getName() + " was added to upstream oneof " + o.getName());
                    }
                }
            }
        }
        assertTrue(problems.isEmpty(), String.join("\n", problems));
        assertEquals(9, additions, "expected exactly the 9 KV session proposal fields added inside upstream messages");
    }

    @Test
    void upstreamEnumsAndServicesHaveNothingExtraBelow100() {
        List<WireTable.Row> rows = WireTable.read(WireTable.UPSTREAM);
        Map<String, Set<String>> enumValues = new HashMap<>();
        Map<String, Set<String>> methods = new HashMap<>();
        for (WireTable.Row r : rows) {
            if (r.kind().equals("enum")) {
                enumValues.computeIfAbsent(r.col(2), k -> new HashSet<>()).add(r.col(3));
            } else if (r.kind().equals("rpc")) {
                methods.computeIfAbsent(r.col(2), k -> new HashSet<>()).add(r.col(3));
            }
        }
        List<String> problems = new ArrayList<>();
        for (String file : WireTable.UPSTREAM_FILES) {
            FileDescriptor fd = FILES.get(file);
            for (EnumDescriptor e : fd.getEnumTypes()) {
                Set<String> listed = enumValues.getOrDefault(e.getName(), Set.of());
                for (EnumValueDescriptor v : e.getValues()) {
                    if (!listed.contains(v.getName()) && v.getNumber() < FIRST_ADDITION_NUMBER) {
                        problems.add(e.getName() + "." + v.getName() + " = " + v.getNumber()
                                + " is not upstream and squats on an upstream number");
                    }
                }
            }
            for (ServiceDescriptor s : fd.getServices()) {
                Set<String> actual = new TreeSet<>();
                s.getMethods().forEach(m -> actual.add(m.getName()));
                if (!actual.equals(new TreeSet<>(methods.getOrDefault(s.getName(), Set.of())))) {
                    problems.add("service " + s.getName() + " has methods " + actual
                            + "; upstream services get no extra RPCs (ours go in OpenEngineKv)");
                }
            }
        }
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    @Test
    void upstreamFilesDeclareOnlyUpstreamTypes() {
        Set<String> upstreamTypes = new HashSet<>();
        for (WireTable.Row r : WireTable.read(WireTable.UPSTREAM)) {
            if (!r.kind().equals("field")) {
                upstreamTypes.add(r.file() + " " + r.col(2));
            }
        }
        List<String> problems = new ArrayList<>();
        for (String file : WireTable.UPSTREAM_FILES) {
            FileDescriptor fd = FILES.get(file);
            List<GenericDescriptor> declared = new ArrayList<>();
            declared.addAll(fd.getMessageTypes());
            declared.addAll(fd.getEnumTypes());
            declared.addAll(fd.getServices());
            for (GenericDescriptor d : declared) {
                if (!upstreamTypes.remove(file + " " + d.getName())) {
                    problems.add(file + " declares " + d.getName() + ", which is not upstream "
                            + "(Handoff types belong in kv_session.proto or kv_lifecycle_types.proto)");
                }
            }
        }
        assertTrue(problems.isEmpty(), String.join("\n", problems));
        assertTrue(upstreamTypes.isEmpty(), "upstream types not declared where the table says: " + upstreamTypes);
    }

    @Test
    void everyFileUsesTheAgreedHeader() {
        Set<String> outerClasses = new HashSet<>();
        for (Map.Entry<String, FileDescriptor> e : FILES.entrySet()) {
            FileDescriptor fd = e.getValue();
            String where = e.getKey() + ": ";
            assertEquals("openengine/v1/" + e.getKey(), fd.getName(), where + "path");
            assertEquals(PACKAGE, fd.getPackage(), where + "package");
            assertEquals("proto3", fd.toProto().getSyntax(), where + "syntax");
            assertTrue(fd.getOptions().getJavaMultipleFiles(), where + "java_multiple_files");
            assertEquals("io.handoff.openengine.v1", fd.getOptions().getJavaPackage(), where + "java_package");
            assertTrue(fd.getOptions().hasJavaOuterClassname(), where + "java_outer_classname");
            assertTrue(outerClasses.add(fd.getOptions().getJavaOuterClassname()), where + "outer class name reused");
        }
        assertEquals(10, FILES.size());
    }
}
