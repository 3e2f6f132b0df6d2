package io.handoff.simulator;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs the deterministic model for one sequence: max tokens, min tokens, EOS (unless {@code ignore_eos}) and stop
 * strings (matched on the decoded text, which is truncated before the match as the engines do by default).
 */
public final class Generation {
    private final int[] ids;
    private final String[] deltas;
    private final String finishReason;
    private final Object stopReason;

    private Generation(int[] ids, String[] deltas, String finishReason, Object stopReason) {
        this.ids = ids;
        this.deltas = deltas;
        this.finishReason = finishReason;
        this.stopReason = stopReason;
    }

    /**
     * @param seed the KV fingerprint the decode works from
     * @param eosIndex where the model would emit EOS (not before {@code minTokens})
     * @param firstToken if not null, output token 0 is this id (a first token sampled by a remote prefill)
     */
    public static Generation run(long seed, int eosIndex, Integer firstToken, int maxTokens, int minTokens,
        boolean ignoreEos, List<String> stops) {
        List<Integer> out = new ArrayList<>();
        List<String> parts = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        String finish = "length";
        Object stopReason = null;
        int eosAt = Math.max(eosIndex, minTokens);
        for (int i = 0; i < maxTokens; i++) {
            if (!ignoreEos && i == eosAt) {
                out.add(Tokenizer.EOS);
                parts.add("");
                finish = "stop";
                break;
            }
            int id = (i == 0 && firstToken != null) ? firstToken : OutputModel.token(seed, i);
            out.add(id);
            String piece = Tokenizer.text(id);
            int before = text.length();
            text.append(piece);
            String matched = null;
            int at = -1;
            if (i + 1 >= minTokens) {
                for (String s : stops) {
                    if (s.isEmpty()) {
                        continue;
                    }
                    int k = text.indexOf(s, Math.max(0, before - s.length() + 1));
                    if (k >= 0 && (at < 0 || k < at)) {
                        at = k;
                        matched = s;
                    }
                }
            }
            if (matched != null) {
                text.setLength(at);
                parts.add(at > before ? text.substring(before) : "");
                finish = "stop";
                stopReason = matched;
                break;
            }
            parts.add(piece);
        }
        return new Generation(out.stream().mapToInt(Integer::intValue).toArray(), parts.toArray(new String[0]), finish,
            stopReason);
    }

    public int[] ids() {
        return ids.clone();
    }

    public int size() {
        return ids.length;
    }

    public int id(int i) {
        return ids[i];
    }

    public String delta(int i) {
        return deltas[i];
    }

    public String text() {
        return String.join("", deltas);
    }

    /** Text of the first {@code n} tokens. */
    public String text(int n) {
        return String.join("", Arrays.copyOf(deltas, n));
    }

    /** "length" or "stop". */
    public String finishReason() {
        return finishReason;
    }

    /** The matched stop string, or null (EOS or length). */
    public Object stopReason() {
        return stopReason;
    }

    public boolean endedWithEos() {
        return ids.length > 0 && ids[ids.length - 1] == Tokenizer.EOS && "stop".equals(finishReason);
    }
}
