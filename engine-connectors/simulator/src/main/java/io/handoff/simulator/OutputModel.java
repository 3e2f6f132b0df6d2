package io.handoff.simulator;

/**
 * The deterministic "model": output token {@code i} of a prompt depends only on the prompt's token ids (through its
 * fingerprint, which is also what a simulated KV transfer carries) and on {@code i}. So an aggregated run, a local
 * prefill run and a disaggregated P-to-D run of the same prompt give the same tokens, and a decode that reads the wrong
 * or a recycled KV gives visibly different tokens.
 */
public final class OutputModel {
    private static final long CORRUPTION = 0x9E3779B97F4A7C15L;

    private OutputModel() {
    }

    /** FNV-1a 64 over the ids: what a prompt's KV "contains". */
    public static long fingerprint(int[] promptIds) {
        long h = 0xcbf29ce484222325L;
        for (int id : promptIds) {
            for (int shift = 0; shift < 32; shift += 8) {
                h ^= (id >>> shift) & 0xff;
                h *= 0x100000001b3L;
            }
        }
        return h;
    }

    /** What a decode computes from blocks that were freed and reused: a different, still deterministic, seed. */
    public static long corrupted(long fingerprint) {
        return Long.rotateLeft(fingerprint ^ CORRUPTION, 17);
    }

    /** Output token {@code index} for KV with fingerprint {@code seed}; always in [1000, 50000). */
    public static int token(long seed, int index) {
        long x = seed + (index + 1) * 0x9E3779B97F4A7C15L;
        x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
        x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
        x = x ^ (x >>> 31);
        return Tokenizer.FIRST_NORMAL_ID + (int) Math.floorMod(x, (long) Tokenizer.ID_SPACE);
    }

    /**
     * Index at which the model emits EOS: K if the prompt holds the control id {@code 10 + K} (word {@code [[eos:K]]}),
     * otherwise {@code 256 + seed mod 256} (rarely reached by short test generations).
     */
    public static int eosIndex(int[] promptIds) {
        for (int id : promptIds) {
            if (id >= Tokenizer.CONTROL_BASE && id < Tokenizer.FIRST_NORMAL_ID) {
                return id - Tokenizer.CONTROL_BASE;
            }
        }
        return 256 + (int) Math.floorMod(fingerprint(promptIds), 256L);
    }
}
