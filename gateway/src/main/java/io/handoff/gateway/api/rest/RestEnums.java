package io.handoff.gateway.api.rest;

import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.ProtocolMessageEnum;
import io.handoff.gateway.session.SessionException;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The REST spelling of the openengine.v1 enums: the value's name without its type prefix, lower case, dashes for
 * underscores ({@code KV_SCHEDULE_STYLE_CONTEXT_FIRST} is {@code context-first}, as in the configuration). It is
 * derived from the proto descriptors, so a value added to the proto appears here without a second list.
 */
final class RestEnums {

    private RestEnums() {
    }

    static String spell(ProtocolMessageEnum value) {
        return spell(value.getValueDescriptor());
    }

    /**
     * The value a caller named; empty when it named none. UNSPECIFIED is not a value callers can name: leaving
     * the field out says the same.
     */
    static Optional<EnumValueDescriptor> parse(EnumDescriptor type, String field, String spelled) {
        if (spelled == null) {
            return Optional.empty();
        }
        return Optional.of(values(type).stream().filter(v -> spell(v).equals(spelled)).findFirst()
                .orElseThrow(() -> SessionException.invalid(field + " must be one of " + spellings(type) + "; '"
                        + spelled + "' is not")));
    }

    /** What callers may send for an enum, e.g. [context-first, generation-first, concurrent]. */
    static List<String> spellings(EnumDescriptor type) {
        return values(type).stream().map(RestEnums::spell).toList();
    }

    private static List<EnumValueDescriptor> values(EnumDescriptor type) {
        return type.getValues().stream().filter(v -> v.getNumber() != 0).toList();
    }

    private static String spell(EnumValueDescriptor v) {
        return v.getName().substring(prefix(v.getType()).length()).toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The style guide's prefix, read off the zero value: KV_SCHEDULE_STYLE_UNSPECIFIED has KV_SCHEDULE_STYLE_. */
    private static String prefix(EnumDescriptor type) {
        String zero = type.findValueByNumber(0).getName();
        return zero.substring(0, zero.length() - "UNSPECIFIED".length());
    }
}
