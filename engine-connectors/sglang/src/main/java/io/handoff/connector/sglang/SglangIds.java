package io.handoff.connector.sglang;

import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.Leg;

import java.util.Map;

/**
 * The native identities of one handoff, as stored in {@link Handoff#nativeIds()}: the bootstrap rendezvous
 * (host, port, room) shared by both legs, and one rid per leg. Rids are fixed-length (32 random hex digits plus a
 * leg suffix) so that SGLang's prefix matching in {@code /abort_request} can only hit the leg it names.
 */
record SglangIds(long room, String bootstrapHost, int bootstrapPort, String prefillRid, String decodeRid) {

    static final String ROOM = "bootstrap_room";
    static final String HOST = "bootstrap_host";
    static final String PORT = "bootstrap_port";
    static final String PREFILL_RID = "prefill_rid";
    static final String DECODE_RID = "decode_rid";
    /** HeldKv handle keys. */
    static final String RID = "rid";
    static final String LEG = "leg";

    Map<String, String> toMap() {
        return Map.of(ROOM, Long.toString(room), HOST, bootstrapHost, PORT, Integer.toString(bootstrapPort),
                PREFILL_RID, prefillRid, DECODE_RID, decodeRid);
    }

    String rid(Leg leg) {
        return leg == Leg.PREFILL ? prefillRid : decodeRid;
    }

    static SglangIds of(Handoff handoff) {
        Map<String, String> ids = handoff.nativeIds();
        try {
            return new SglangIds(Long.parseLong(ids.get(ROOM)), ids.get(HOST), Integer.parseInt(ids.get(PORT)),
                    require(ids, PREFILL_RID), require(ids, DECODE_RID));
        } catch (RuntimeException e) {
            throw EngineException.invalid("the handoff was not planned by the sglang connector (native ids " + ids + ")");
        }
    }

    private static String require(Map<String, String> ids, String key) {
        String v = ids.get(key);
        if (v == null || v.isEmpty()) {
            throw new IllegalArgumentException(key);
        }
        return v;
    }
}
