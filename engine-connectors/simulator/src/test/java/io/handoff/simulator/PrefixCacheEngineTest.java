package io.handoff.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.vllm.VllmConfig;
import io.handoff.simulator.vllm.VllmEngine;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * An engine's prefix cache seen from outside: a prefill's time grows with its uncached tokens, and
 * {@code /sim/stats} counts the hits and misses in tokens, for text and token-id prompts alike.
 */
class PrefixCacheEngineTest extends SimTestBase {

    /** 64 one-token words (four blocks of 16): a shared document. */
    private static final String DOCUMENT = IntStream.range(0, 64).mapToObj(i -> String.format("d%03d", i))
        .collect(Collectors.joining(" "));

    private VllmEngine engine(long baseMs, double msPerUncachedToken) {
        VllmConfig c = new VllmConfig();
        c.model = "m";
        c.prefillLatencyMs = baseMs;
        c.prefillMsPerUncachedToken = msPerUncachedToken;
        return start(new VllmEngine(c));
    }

    private static ObjectNode completion(Object prompt) {
        ObjectNode o = Http.obj().put("model", "m").put("max_tokens", 2);
        if (prompt instanceof String s) {
            o.put("prompt", s);
        } else {
            IntStream.of((int[]) prompt).forEach(o.putArray("prompt")::add);
        }
        return o;
    }

    private static void send(SimEngine e, Object prompt) {
        SimHttp.Resp r = SimHttp.post(e.baseUrl() + "/v1/completions", completion(prompt));
        assertEquals(200, r.status, r.raw);
    }

    @Test
    void aPrefillTakesItsBaseTimePlusItsUncachedTokens() {
        VllmEngine e = engine(20, 0.5);
        int[] ids = Tokenizer.encode(DOCUMENT + " one two");
        assertEquals(20 + 33, (long) e.onContext(() -> e.prefillMs(ids)), "66 tokens, none cached: 20 + 66 x 0.5");
        int[] other = Tokenizer.encode(DOCUMENT + " abc def ghi");
        assertEquals(20 + 2, (long) e.onContext(() -> e.prefillMs(other)), "64 cached, 3 computed: 20 + 1.5, rounded");
    }

    @Test
    void statsCountHitsAndMissesInTokensForTextAndTokenIds() {
        VllmEngine e = engine(0, 0);
        send(e, DOCUMENT + " one two");
        assertEquals(0, e.stat("prefix_cache_hit_tokens"));
        assertEquals(66, e.stat("prefix_cache_miss_tokens"));
        assertEquals(4, e.stat("prefix_cache_blocks"));
        send(e, DOCUMENT + " abc def ghi");
        assertEquals(64, e.stat("prefix_cache_hit_tokens"));
        assertEquals(66 + 3, e.stat("prefix_cache_miss_tokens"));
        // the same document as token ids meets the same blocks
        send(e, IntStream.concat(IntStream.of(Tokenizer.encode(DOCUMENT)), IntStream.of(1001, 1002)).toArray());
        assertEquals(128, e.stat("prefix_cache_hit_tokens"));

        e.reset();
        send(e, DOCUMENT);
        assertEquals(0, e.stat("prefix_cache_hit_tokens"), "a reset empties the cache");
        e.crash(-1);
        e.restart();
        send(e, DOCUMENT);
        assertEquals(0, e.stat("prefix_cache_hit_tokens"), "a crash loses the cache");
        assertEquals(128, e.stat("prefix_cache_miss_tokens"));
    }

    @Test
    void anUncachedPrefillIsSlowerByItsTokensOnTheWire() {
        VllmEngine e = engine(0, 20);
        long started = System.nanoTime();
        send(e, DOCUMENT);
        long tookMs = (System.nanoTime() - started) / 1_000_000;
        // a timer never fires early: 64 uncached tokens at 20 ms each take at least 1.28 s
        assertTrue(tookMs >= 1280, "took " + tookMs + " ms");
        assertEquals(64, e.stat("prefix_cache_miss_tokens"));
    }

    @Test
    void theKnobsParseAndRefuseNonsense() {
        EngineConfig c = new EngineConfig();
        c.applyAll(Map.of("prefill-ms-per-uncached-token", "0.05", "prefix-cache-blocks", "0"));
        assertEquals(0.05, c.prefillMsPerUncachedToken);
        assertEquals(0, c.prefixCacheBlocks);
        assertThrows(IllegalArgumentException.class, () -> c.apply("prefill-ms-per-uncached-token", "-1"));
        assertThrows(IllegalArgumentException.class, () -> c.apply("prefix-cache-blocks", "-2"));
    }
}
