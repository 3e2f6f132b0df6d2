package io.handoff.benchmarks;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SchedulerHopsTest {

    private static final long DRIVER = 300;
    private static final long GATEWAY = 200;
    private static final long ENGINES = 100;

    /** Lines as {@code perf sched timehist -w} prints them: run slices, and wake-ups by thread and process. */
    private static final List<String> GATEWAY_REQUEST = List.of(
            "     702.400000 [0001]  vert.x-eventloo[201/200]                                     awakened: vert.x-eventloo[102/100]",
            "     702.400100 [0001]  vert.x-eventloo[102/100]            5.332      0.043      0.226",
            "     702.410000 [0000]  vert.x-eventloo[301/300]                                     awakened: vert.x-eventloo[201/200]",
            "     702.410050 [0000]  C2 CompilerThre[211/200]                                     awakened: VM Periodic Tas[212/200]",
            "     702.410800 [0000]  vert.x-eventloo[201/200]                                     awakened: vert.x-eventloo[101/100]",
            "     702.412000 [0001]  swapper                                                      awakened: redis-server[2308]",
            "     702.416000 [0001]  vert.x-eventloo[101/100]                                     awakened: vert.x-eventloo[201/200]",
            "     702.416500 [0000]  vert.x-eventloo[201/200]                                     awakened: vert.x-eventloo[103/100]",
            "     702.416900 [0001]  vert.x-eventloo[103/100]                                     awakened: vert.x-eventloo[101/100]",
            "     702.417000 [0001]  vert.x-eventloo[103/100]                                     awakened: vert.x-eventloo[201/200]",
            "     702.417100 [0000]  vert.x-eventloo[202/200]                                     awakened: vert.x-eventloo[104/100]",
            "     702.417200 [0001]  vert.x-eventloo[103/100]                                     awakened: vert.x-eventloo[201/200]",
            "     702.417500 [0000]  vert.x-eventloo[201/200]                                     awakened: vert.x-eventloo[301/300]",
            "     702.417600 [0000]  vert.x-eventloo[201/200]            0.294      0.000      0.170",
            "     702.422000 [0001]  vert.x-eventloo[103/100]                                     awakened: vert.x-eventloo[201/200]",
            "     702.422300 [0000]  vert.x-eventloo[201/200]                                     awakened: vert.x-eventloo[301/300]");

    @Test
    void readsTheWakerAndTheWokenProcessOfAWakeUp() {
        assertEquals(Optional.of(new SchedulerHops.Wake(702_410_050_000L, 200, 200, 211, 212, false)),
                SchedulerHops.parse(GATEWAY_REQUEST.get(3)));
        // a process of one thread shows as name[pid]; a line without a wake-up is no wake-up
        assertEquals(Optional.of(new SchedulerHops.Wake(702_412_000_000L, 0, 2308, 0, 2308, false)), SchedulerHops.parse(
                "     702.412000 [0001]  swapper[0]                                       awakened: redis-server[2308]"));
        assertEquals(Optional.empty(), SchedulerHops.parse(GATEWAY_REQUEST.get(1)));
    }

    @Test
    void countsTheWakeUpsBetweenTwoEventLoopsOfOneProcess() {
        List<SchedulerHops.Wake> wakes = wakes(GATEWAY_REQUEST);
        assertEquals(1, SchedulerHops.betweenEventLoopsOf(wakes, ENGINES), "one engine loop woke its other loop");
        assertEquals(0, SchedulerHops.betweenEventLoopsOf(wakes, GATEWAY), "a compiler thread is no event loop");
        assertEquals(Optional.of(new SchedulerHops.Wake(702_416_900_000L, 100, 100, 103, 101, true)),
                SchedulerHops.parse(GATEWAY_REQUEST.get(8)));
    }

    @Test
    void aRequestThroughTheGatewayIsCutWhereEachProcessWokeTheNext() {
        List<SchedulerHops.Wake> wakes = wakes(GATEWAY_REQUEST);
        SchedulerHops.Request request = new SchedulerHops.Request(702_409_900_000L, 702_417_700_000L, 702_422_500_000L);

        SchedulerHops.Hops hops = SchedulerHops.of(request, wakes, DRIVER, GATEWAY, Set.of(ENGINES)).orElseThrow();

        // the gateway woke an engine before the request started (a sample of its metrics): not the prefill leg
        assertEquals(100_000, hops.toProxy());
        assertEquals(800_000, hops.intake());
        assertEquals(5_200_000, hops.prefill());
        assertEquals(500_000, hops.handoff());
        // the decode engine woke its prefill peer (the KV pull) and then the gateway twice (headers, token): the last;
        // the gateway's metrics sample of an engine meanwhile is no second decode leg
        assertEquals(700_000, hops.firstEvent());
        assertEquals(300_000, hops.relay());
        assertEquals(200_000, hops.toClient());
        assertEquals(request.firstToken() - request.start(), sum(hops, SchedulerHops.TTFT_HOPS));
        // the rest of the stream: the decode engine's last wake-up of the gateway, then the gateway's ending
        assertEquals(4_800_000, hops.decodeRest());
        assertEquals(500_000, hops.ending());
    }

    @Test
    void aRequestSentDirectIsItsOwnProxy() {
        List<String> lines = List.of(
                "     10.000100 [0000]  vert.x-eventloo[301/300]                                     awakened: vert.x-eventloo[101/100]",
                "     10.005000 [0001]  vert.x-eventloo[101/100]                                     awakened: vert.x-eventloo[301/300]",
                "     10.005200 [0000]  vert.x-eventloo[301/300]                                     awakened: vert.x-eventloo[103/100]",
                "     10.006000 [0001]  vert.x-eventloo[103/100]                                     awakened: vert.x-eventloo[301/300]");
        SchedulerHops.Request request = new SchedulerHops.Request(10_000_000_000L, 10_006_100_000L, 10_006_200_000L);

        SchedulerHops.Hops hops = SchedulerHops.of(request, wakes(lines), DRIVER, DRIVER, Set.of(ENGINES))
                .orElseThrow();

        assertEquals(new SchedulerHops.Hops(0, 100_000, 4_900_000, 200_000, 800_000, 0, 100_000, 0, 200_000), hops);
    }

    @Test
    void aRequestWithAHopThatWokeNobodyIsLeftOut() {
        // the client was running when the gateway relayed the first token: no wake-up shows that hop
        List<String> lines = GATEWAY_REQUEST.stream().filter(l -> !l.startsWith("     702.417500")).toList();
        SchedulerHops.Request request = new SchedulerHops.Request(702_409_900_000L, 702_417_700_000L, 702_422_500_000L);

        assertTrue(SchedulerHops.of(request, wakes(lines), DRIVER, GATEWAY, Set.of(ENGINES)).isEmpty());
    }

    @Test
    void mediansAreTakenHopByHop() {
        List<SchedulerHops.Hops> hops = List.of(
                new SchedulerHops.Hops(1, 10, 100, 1000, 1, 5, 3, 9, 4),
                new SchedulerHops.Hops(2, 30, 300, 3000, 2, 6, 1, 7, 6),
                new SchedulerHops.Hops(3, 20, 200, 2000, 3, 7, 2, 8, 5));

        assertEquals(List.of(2L, 20L, 200L, 2000L, 2L, 6L, 2L, 8L, 5L),
                Arrays.stream(SchedulerHops.medians(hops)).boxed().toList());
    }

    private static List<SchedulerHops.Wake> wakes(List<String> lines) {
        return lines.stream().flatMap(l -> SchedulerHops.parse(l).stream()).toList();
    }

    private static long sum(SchedulerHops.Hops hops, int first) {
        return Arrays.stream(hops.asArray()).limit(first).sum();
    }
}
