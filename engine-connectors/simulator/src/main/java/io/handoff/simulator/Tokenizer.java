package io.handoff.simulator;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A deterministic stand-in tokenizer shared by all families, so that a prompt sent as text to one leg and as token ids
 * to the other gives the same ids.
 *
 * <ul>
 *   <li>Text is split on whitespace, each word into pieces of at most 4 characters; a piece becomes
 *       {@code 1000 + fnv1a32(piece) mod 49000}, so normal ids lie in [1000, 50000).</li>
 *   <li>A word {@code [[eos:K]]} becomes the control id {@code 10 + K} (K in 0..989): the output ends with EOS after
 *       K tokens (see {@link OutputModel#eosIndex}). Send that id in a token-id prompt for the same effect.</li>
 *   <li>Output token {@code id} reads as {@code " w<id>"}; EOS (id {@value #EOS}) and control ids read as "".</li>
 * </ul>
 */
public final class Tokenizer {
    public static final int EOS = 2;
    public static final int CONTROL_BASE = 10;
    public static final int FIRST_NORMAL_ID = 1000;
    public static final int ID_SPACE = 49000;
    private static final Pattern EOS_MARKER = Pattern.compile("\\[\\[eos:(\\d{1,3})]]");

    private Tokenizer() {
    }

    public static int[] encode(String text) {
        List<Integer> ids = new ArrayList<>();
        for (String word : text.trim().split("\\s+")) {
            if (word.isEmpty()) {
                continue;
            }
            Matcher m = EOS_MARKER.matcher(word);
            if (m.matches()) {
                ids.add(CONTROL_BASE + Math.min(989, Integer.parseInt(m.group(1))));
                continue;
            }
            for (int i = 0; i < word.length(); i += 4) {
                String piece = word.substring(i, Math.min(word.length(), i + 4));
                ids.add(FIRST_NORMAL_ID + Math.floorMod(fnv1a32(piece), ID_SPACE));
            }
        }
        int[] out = new int[ids.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = ids.get(i);
        }
        return out;
    }

    /** The text of one output token. */
    public static String text(int id) {
        if (id < FIRST_NORMAL_ID) {
            return "";
        }
        return " w" + id;
    }

    public static String decode(int[] ids) {
        StringBuilder sb = new StringBuilder();
        for (int id : ids) {
            sb.append(text(id));
        }
        return sb.toString();
    }

    private static int fnv1a32(String s) {
        int h = 0x811c9dc5;
        for (int i = 0; i < s.length(); i++) {
            h ^= s.charAt(i);
            h *= 0x01000193;
        }
        return h;
    }
}
