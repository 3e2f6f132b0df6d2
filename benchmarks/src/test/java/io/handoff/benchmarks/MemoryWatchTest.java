package io.handoff.benchmarks;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class MemoryWatchTest {

    @Test
    void readsTheHeapInUseOfG1AndOfZgc() {
        assertEquals(53445L * 1024, MemoryWatch.heapUsed("""
                1234:
                 garbage-first heap   total 262144K, used 53445K [0x0000000081400000, 0x0000000100000000)
                  region size 1024K, 12 young (12288K), 2 survivors (2048K)
                 Metaspace       used 68297K, committed 69056K, reserved 1114112K
                """));
        assertEquals(132L << 20, MemoryWatch.heapUsed("""
                1418:
                 ZHeap           used 132M, capacity 378M, max capacity 6028M
                 Metaspace       used 127K, committed 320K, reserved 1114112K
                """));
        assertEquals(2L << 30, MemoryWatch.heapUsed(" ZHeap           used 2G, capacity 3G, max capacity 6G\n"));
        assertEquals(-1, MemoryWatch.heapUsed(" Metaspace       used 127K, committed 320K, reserved 1114112K\n"));
    }
}
