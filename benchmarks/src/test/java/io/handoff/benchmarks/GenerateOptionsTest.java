package io.handoff.benchmarks;

import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GenerateOptionsTest {

    private static final String[] ENGINES = {"--prefill", "http://127.0.0.1:9001", "--decode=http://127.0.0.1:9002"};

    @Test
    void defaultsAndLaterValuesWin() {
        GenerateOptions o = GenerateOptions.parse(concat(ENGINES, "--concurrency", "8", "--concurrency", "32",
                "--mode", "grpc", "--watch", "gateway=42", "--seconds", "2.5"));
        assertEquals(URI.create("http://127.0.0.1:9001"), o.prefill());
        assertEquals(URI.create("http://127.0.0.1:9002"), o.decode());
        assertEquals(32, o.concurrency());
        assertEquals(64, o.maxTokens());
        assertEquals(Duration.ofMillis(2500), o.seconds());
        assertTrue(o.mode().grpc());
        assertFalse(o.mode().http());
        assertEquals(42L, o.watch().get("gateway"));
        assertEquals(URI.create("http://127.0.0.1:8080"), o.gatewayHttp());
        assertFalse(o.http2(), "HTTP/1.1 unless asked");
        assertTrue(GenerateOptions.parse(concat(ENGINES, "--http-version", "2")).http2());
        assertFalse(GenerateOptions.parse(concat(ENGINES, "--http-version", "2", "--http-version=1.1")).http2());
    }

    @Test
    void policyComparisonNeedsNoDirectEnginesButAPrefillPool() {
        GenerateOptions o = GenerateOptions.parse(new String[] {"--policy", "prefix-affinity=sim-pa",
            "--policy", "least-outstanding=sim-lo", "--prefill-pool", "http://127.0.0.1:9001",
            "--prefill-pool", "http://127.0.0.1:9003", "--prefix-tokens", "500"});
        assertEquals(List.of("prefix-affinity", "least-outstanding"), List.copyOf(o.policies().keySet()));
        assertEquals("sim-lo", o.policies().get("least-outstanding"));
        assertEquals(2, o.prefillPool().size());
        assertEquals(32, o.workload().prefixes());
        assertEquals(700, o.workload().promptTokens());
        assertThrows(IllegalArgumentException.class, () -> GenerateOptions.parse(new String[] {"--policy", "x=m"}));
        assertThrows(IllegalArgumentException.class, () -> GenerateOptions.parse(new String[] {"--policy", "x",
            "--prefill-pool", "http://127.0.0.1:9001"}));
    }

    @Test
    void refusesWhatCannotRun() {
        assertThrows(IllegalArgumentException.class, () -> GenerateOptions.parse(new String[] {"--mode", "both"}));
        assertThrows(IllegalArgumentException.class, () -> GenerateOptions.parse(concat(ENGINES, "--rounds", "0")));
        assertThrows(IllegalArgumentException.class, () -> GenerateOptions.parse(concat(ENGINES, "--mode", "rest")));
        assertThrows(IllegalArgumentException.class, () -> GenerateOptions.parse(concat(ENGINES, "--watch", "x")));
        assertThrows(IllegalArgumentException.class, () -> GenerateOptions.parse(concat(ENGINES, "--bogus", "1")));
        assertThrows(IllegalArgumentException.class, () -> GenerateOptions.parse(concat(ENGINES, "--http-version", "3")));
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
