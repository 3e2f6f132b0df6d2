package io.handoff.simulator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CoreTest {

    @Test
    void tokenizerIsDeterministicAndInRange() {
        int[] a = Tokenizer.encode("hello   wonderful world");
        assertArrayEquals(a, Tokenizer.encode("hello wonderful world"));
        assertEquals(7, a.length, "words split into pieces of at most 4 characters");
        for (int id : a) {
            assertTrue(id >= 1000 && id < 50000);
        }
        assertEquals(Tokenizer.CONTROL_BASE + 3, Tokenizer.encode("x [[eos:3]]")[1]);
        assertEquals(3, OutputModel.eosIndex(Tokenizer.encode("x [[eos:3]]")));
    }

    @Test
    void outputDependsOnTheKvFingerprintOnly() {
        long seed = OutputModel.fingerprint(Tokenizer.encode("a prompt"));
        Generation g1 = Generation.run(seed, 500, null, 8, 0, false, List.of());
        Generation g2 = Generation.run(seed, 500, null, 8, 0, false, List.of());
        assertArrayEquals(g1.ids(), g2.ids());
        assertEquals("length", g1.finishReason());
        Generation bad = Generation.run(OutputModel.corrupted(seed), 500, null, 8, 0, false, List.of());
        assertNotEquals(g1.text(), bad.text());
        Generation withFirst = Generation.run(seed, 500, g1.id(0), 8, 0, false, List.of());
        assertArrayEquals(g1.ids(), withFirst.ids());
    }

    @Test
    void eosMinTokensIgnoreEosAndStopStrings() {
        long seed = 42;
        Generation eos = Generation.run(seed, 2, null, 8, 0, false, List.of());
        assertEquals(3, eos.size());
        assertTrue(eos.endedWithEos());
        assertNull(eos.stopReason());
        assertEquals(8, Generation.run(seed, 2, null, 8, 0, true, List.of()).size());
        assertEquals(6, Generation.run(seed, 2, null, 8, 5, false, List.of()).size());
        Generation full = Generation.run(seed, 500, null, 8, 0, false, List.of());
        String stop = full.delta(3);
        Generation stopped = Generation.run(seed, 500, null, 8, 0, false, List.of(stop));
        assertEquals("stop", stopped.finishReason());
        assertEquals(stop, stopped.stopReason());
        assertEquals(full.text(3), stopped.text(), "text is cut before the stop string");
    }

    @Test
    void blockPoolAccounting() {
        KvBlockPool pool = new KvBlockPool(4, 16);
        assertEquals(2, pool.blocksFor(17));
        assertEquals(0, pool.blocksFor(0));
        int[] b = pool.allocate(3);
        assertEquals(3, b.length);
        assertNull(pool.allocate(2));
        assertEquals(0.75, pool.usage());
        pool.free(b);
        assertEquals(4, pool.freeBlocks());
    }

    @Test
    void commandLineParsing() {
        Map<String, String> m = SimulatorMain.parse(new String[] {"--family", "vllm", "--port=8100", "--fleet",
            "--no-kv-connector", "--role", "decode"});
        assertEquals("vllm", m.get("family"));
        assertEquals("8100", m.get("port"));
        assertEquals("true", m.get("fleet"));
        assertEquals("true", m.get("no-kv-connector"));
        assertEquals("decode", m.get("role"));
        SimEngine e = Engines.create(Family.parse("trt-llm"), Map.of("kv-transfer-timeout-ms", "5", "role", "ctx"));
        assertEquals(Role.PREFILL, e.role());
    }
}
