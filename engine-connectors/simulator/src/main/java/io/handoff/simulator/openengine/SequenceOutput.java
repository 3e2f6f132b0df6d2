package io.handoff.simulator.openengine;

import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.StopMatch;
import io.handoff.simulator.Generation;
import io.handoff.simulator.OutputModel;
import io.handoff.simulator.Tokenizer;
import java.util.Arrays;

/**
 * One output sequence in openengine terms, computed by the shared {@link Generation} model (so the tokens equal the
 * other simulators' for the same prompt) plus the one stop rule the HTTP families do not have: stop token ids.
 */
final class SequenceOutput {
    final int[] ids;
    final String[] deltas;
    final FinishReason reason;
    final StopMatch match;

    private SequenceOutput(int[] ids, String[] deltas, FinishReason reason, StopMatch match) {
        this.ids = ids;
        this.deltas = deltas;
        this.reason = reason;
        this.match = match;
    }

    /**
     * @param seed  the KV fingerprint the decode works from
     * @param index the output index; output 0 is exactly the aggregated answer, others use a derived seed so that
     *              n > 1 gives distinct sequences, as sampling would
     */
    static SequenceOutput run(ParsedRequest r, long seed, int index) {
        long s = index == 0 ? seed : OutputModel.fingerprint(new int[] {(int) seed, (int) (seed >>> 32), index});
        Generation g = Generation.run(s, OutputModel.eosIndex(r.promptIds), null, r.maxTokens, r.minTokens,
            r.ignoreEos, r.stopTexts);
        int n = g.size();
        String[] deltas = new String[n];
        for (int i = 0; i < n; i++) {
            deltas[i] = g.delta(i);
        }
        for (int i = Math.max(0, r.minTokens - 1); i < n; i++) {
            if (r.stopTokenIds.contains(g.id(i))) {
                int keep = r.includeStopInOutput ? i + 1 : i;
                return new SequenceOutput(Arrays.copyOf(g.ids(), keep), Arrays.copyOf(deltas, keep),
                    FinishReason.FINISH_REASON_STOP, StopMatch.newBuilder().setStopTokenId(g.id(i)).build());
            }
        }
        if (!"stop".equals(g.finishReason())) {
            return new SequenceOutput(g.ids(), deltas, FinishReason.FINISH_REASON_LENGTH, null);
        }
        StopMatch m = g.endedWithEos() ? StopMatch.newBuilder().setEosTokenId(Tokenizer.EOS).build()
            : StopMatch.newBuilder().setStopText(String.valueOf(g.stopReason())).build();
        return new SequenceOutput(g.ids(), deltas, FinishReason.FINISH_REASON_STOP, m);
    }

    int size() {
        return ids.length;
    }
}
