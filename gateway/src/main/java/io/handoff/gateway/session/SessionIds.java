package io.handoff.gateway.session;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Session ids: 128 bits from {@link SecureRandom}, as 32 lowercase hex digits. The first two digits name the
 * index bucket (one of {@value #BUCKETS}), so a session's record and its entry in the expiry index share one
 * Redis Cluster hash tag and one atomic script can update both.
 */
public final class SessionIds {

    /** Fixed for the life of the data: changing it would strand sessions in buckets nobody scans. */
    public static final int BUCKETS = 256;

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final HexFormat HEX = HexFormat.of();

    private SessionIds() {
    }

    public static String mint() {
        byte[] bits = new byte[16];
        RANDOM.nextBytes(bits);
        return HEX.formatHex(bits);
    }

    public static boolean isWellFormed(String id) {
        if (id == null || id.length() != 32) {
            return false;
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }

    public static int bucketOf(String id) {
        return Integer.parseInt(id, 0, 2, 16);
    }

    /** The two hex digits naming a bucket, as used in store keys. */
    public static String bucketTag(int bucket) {
        return HEX.toHexDigits((byte) bucket);
    }
}
