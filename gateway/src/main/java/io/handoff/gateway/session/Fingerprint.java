package io.handoff.gateway.session;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Struct;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The fingerprint of an allocation request: what makes two uses of one idempotency key "the same request".
 * It covers what the caller asked for (not the defaults we resolved), so a change of configuration between a
 * request and its retry does not turn the retry into a conflict.
 */
final class Fingerprint {

    /** Cloned per use: looking the algorithm up among the security providers cost more than hashing the request. */
    private static final MessageDigest SHA_256;

    static {
        try {
            SHA_256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private Fingerprint() {
    }

    static String of(AllocateCommand c) {
        try {
            MessageDigest digest = (MessageDigest) SHA_256.clone();
            field(digest, c.requestId());
            field(digest, c.model());
            field(digest, c.style().map(Enum::name).orElse("-"));
            field(digest, c.disposition().map(Enum::name).orElse("-"));
            field(digest, c.lease().map(d -> Long.toString(d.toMillis())).orElse("-"));
            digest.update(deterministicBytes(c.attributes()));
            return HexFormat.of().formatHex(digest.digest(), 0, 16);
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void field(MessageDigest digest, String value) {
        digest.update(value.getBytes(StandardCharsets.UTF_8));
        digest.update((byte) 0);
    }

    private static byte[] deterministicBytes(Struct struct) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            CodedOutputStream out = CodedOutputStream.newInstance(bytes);
            out.useDeterministicSerialization();
            struct.writeTo(out);
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
