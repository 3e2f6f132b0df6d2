package io.handoff.connector.openai.completion;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.GenerateRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Names the fields of an openengine.v1 {@code GenerateRequest} as dotted paths ({@code sampling.temperature},
 * {@code stopping.conditions.stop_text}, {@code guided.json_schema}), read from the protobuf descriptors rather
 * than listed by hand: a field added to the schema later shows up here at once, so a connector that does not know
 * it refuses it instead of dropping it silently.
 *
 * <p>Option groups (sampling, stopping, response, kv, guided, the candidate selections and the stop conditions)
 * are opened up to their leaves; every other message (token id lists, media, the session reference, the
 * {@code extra} Struct) is one leaf.
 */
public final class RequestFieldPaths {

    private static final Set<String> OPENED = Set.of(
            "openengine.v1.SamplingParams",
            "openengine.v1.StoppingOptions",
            "openengine.v1.ResponseOptions",
            "openengine.v1.KvOptions",
            "openengine.v1.GuidedDecoding",
            "openengine.v1.CandidateTokenSelection",
            "openengine.v1.StopCondition");

    /** The request's fields with their paths, opened groups with their own: built once, walked per request. */
    private static final List<PathNode> REQUEST = nodes(GenerateRequest.getDescriptor(), "");

    /** A field and its dotted path; {@code children} for an option group that is opened up to its leaves. */
    private record PathNode(FieldDescriptor field, String path, List<PathNode> children) {
    }

    private RequestFieldPaths() {
    }

    /** Every field path a request can set. */
    public static SortedSet<String> all() {
        SortedSet<String> out = new TreeSet<>();
        leaves(REQUEST, out);
        return out;
    }

    /** The field paths this request sets (present optionals, non-empty lists, non-default plain fields). */
    public static SortedSet<String> setIn(GenerateRequest request) {
        SortedSet<String> out = new TreeSet<>();
        collect(request, REQUEST, out::add);
        return out;
    }

    /**
     * Refuses the request, before anything is sent, if it sets a field outside {@code carried}.
     *
     * @throws EngineException UNSUPPORTED_FEATURE naming every field that cannot be carried
     */
    public static void refuseOthers(GenerateRequest request, Set<String> carried, String family) {
        SortedSet<String> refused = new TreeSet<>();
        collect(request, REQUEST, path -> {
            if (!carried.contains(path)) {
                refused.add(path);
            }
        });
        if (!refused.isEmpty()) {
            throw EngineException.unsupported(family + " cannot carry " + String.join(", ", refused)
                    + " losslessly; see mappings/" + family + ".md");
        }
    }

    private static List<PathNode> nodes(Descriptor type, String prefix) {
        List<PathNode> nodes = new ArrayList<>();
        for (FieldDescriptor field : type.getFields()) {
            String path = prefix + field.getName();
            nodes.add(new PathNode(field, path, opened(field) ? nodes(field.getMessageType(), path + ".") : null));
        }
        return List.copyOf(nodes);
    }

    private static void leaves(List<PathNode> nodes, SortedSet<String> out) {
        for (PathNode node : nodes) {
            if (node.children() != null) {
                leaves(node.children(), out);
            } else {
                out.add(node.path());
            }
        }
    }

    private static void collect(Message message, List<PathNode> nodes, Consumer<String> out) {
        for (PathNode node : nodes) {
            FieldDescriptor field = node.field();
            if (field.isRepeated()) {
                int count = message.getRepeatedFieldCount(field);
                for (int i = 0; i < count; i++) {
                    if (node.children() != null) {
                        collect((Message) message.getRepeatedField(field, i), node.children(), out);
                    } else {
                        out.accept(node.path());
                    }
                }
            } else if (field.hasPresence()) {
                if (!message.hasField(field)) {
                    continue;
                }
                if (node.children() != null) {
                    collect((Message) message.getField(field), node.children(), out);
                } else {
                    out.accept(node.path());
                }
            } else if (!message.getField(field).equals(field.getDefaultValue())) {
                out.accept(node.path());
            }
        }
    }

    private static boolean opened(FieldDescriptor field) {
        return field.getJavaType() == FieldDescriptor.JavaType.MESSAGE
                && OPENED.contains(field.getMessageType().getFullName());
    }
}
