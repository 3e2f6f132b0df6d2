package io.handoff.connector.openai.completion;

import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.helpers.test.AssertSubscriber;
import io.smallrye.mutiny.subscription.MultiEmitter;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The chunk stream as an event stream: demand, the held finishes, failures and cancellation. */
class CompletionStreamsTest {

    private static final String TWO_CHOICES = "{\"choices\":[{\"index\":0,\"text\":\"a\",\"finish_reason\":null},"
            + "{\"index\":1,\"text\":\"b\",\"finish_reason\":null}]}";
    private static final String FINISH = "{\"choices\":[{\"index\":0,\"text\":\"c\",\"finish_reason\":\"stop\"}]}";
    private static final String USAGE = "{\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":3,"
            + "\"total_tokens\":4}}";
    private static final String TOOL_CALL = "{\"choices\":[{\"index\":1,\"delta\":{\"tool_calls\":[{\"id\":\"t\"}]},"
            + "\"finish_reason\":null}]}";

    @Test
    void neverEmitsMoreThanAskedEvenWhenOneChunkMakesTwoEvents() {
        AssertSubscriber<GenerateResponse> client = CompletionStreams.events(chunks(TWO_CHOICES, FINISH, USAGE), "r")
                .subscribe().withSubscriber(AssertSubscriber.create(1));

        assertEquals(List.of("a"), texts(client.getItems()));
        client.request(1);
        assertEquals(List.of("a", "b"), texts(client.getItems()));
        client.request(10);
        client.assertCompleted();
        List<GenerateResponse> all = client.getItems();
        assertEquals(List.of("a", "b", "c"), texts(all));
        assertEquals(4, all.size());
        assertTrue(all.get(3).hasFinished());
        assertEquals(4, all.get(3).getUsage().getTotalTokens(), "the usage rides on the held finish, last");
    }

    @Test
    void completesWithoutDemandWhenNothingIsLeftToSend() {
        AssertSubscriber<GenerateResponse> client = CompletionStreams.events(Multi.createFrom().empty(), "r")
                .subscribe().withSubscriber(AssertSubscriber.create(0));
        client.assertCompleted().assertHasNotReceivedAnyItem();
    }

    @Test
    void aFailureOfTheChunksDeliversTheHeldFinishFirst() {
        Multi<CompletionChunk> failing = Multi.createBy().concatenating().streams(chunks(FINISH),
                Multi.createFrom().failure(new IllegalStateException("cut")));
        AssertSubscriber<GenerateResponse> client = CompletionStreams.events(failing, "r")
                .subscribe().withSubscriber(AssertSubscriber.create(10));

        client.assertFailedWith(IllegalStateException.class, "cut");
        assertEquals(2, client.getItems().size());
        assertTrue(client.getItems().get(1).hasFinished(), "what the engine finished still reaches the client");
        assertFalse(client.getItems().get(1).hasUsage());
    }

    @Test
    void anUnmappableChunkCancelsTheChunksAndFailsAfterTheHeldFinish() {
        AtomicBoolean cancelled = new AtomicBoolean();
        AtomicReference<MultiEmitter<? super CompletionChunk>> engine = new AtomicReference<>();
        Multi<CompletionChunk> chunks = Multi.createFrom().<CompletionChunk>emitter(engine::set)
                .onCancellation().invoke(() -> cancelled.set(true));
        AssertSubscriber<GenerateResponse> client = CompletionStreams.events(chunks, "r")
                .subscribe().withSubscriber(AssertSubscriber.create(10));

        engine.get().emit(chunk(FINISH));
        engine.get().emit(chunk(TOOL_CALL));

        assertTrue(cancelled.get(), "the exchange is closed");
        client.assertFailedWith(EngineException.class, "tool calls");
        assertEquals(2, client.getItems().size());
        assertTrue(client.getItems().get(1).hasFinished());
    }

    @Test
    void cancellingTheEventsCancelsTheChunks() {
        AtomicBoolean cancelled = new AtomicBoolean();
        Multi<CompletionChunk> endless = Multi.createFrom().<CompletionChunk>emitter(em -> em.emit(chunk(TWO_CHOICES)))
                .onCancellation().invoke(() -> cancelled.set(true));
        AssertSubscriber<GenerateResponse> client = CompletionStreams.events(endless, "r")
                .subscribe().withSubscriber(AssertSubscriber.create(1));

        client.cancel();

        assertTrue(cancelled.get());
        assertEquals(1, client.getItems().size());
        client.assertNotTerminated();
    }

    @Test
    void eachChunkIsAskedForOnlyWhenItsEventsAreWanted() {
        AtomicLong asked = new AtomicLong();
        Multi<CompletionChunk> counted = chunks(TWO_CHOICES, TWO_CHOICES, TWO_CHOICES).onRequest().invoke(asked::addAndGet);
        AssertSubscriber<GenerateResponse> client = CompletionStreams.events(counted, "r")
                .subscribe().withSubscriber(AssertSubscriber.create(0));
        assertEquals(0, asked.get());

        client.request(3);

        assertEquals(3, client.getItems().size());
        assertEquals(2, asked.get(), "two chunks make the three events; the third waits with one event over");
    }

    @Test
    void aChunkAskedForIsNotAskedAgainWhileItIsOnItsWay() {
        AtomicLong asked = new AtomicLong();
        AtomicReference<MultiEmitter<? super CompletionChunk>> engine = new AtomicReference<>();
        Multi<CompletionChunk> slow = Multi.createFrom().<CompletionChunk>emitter(engine::set)
                .onRequest().invoke(asked::addAndGet);
        AssertSubscriber<GenerateResponse> client = CompletionStreams.events(slow, "r")
                .subscribe().withSubscriber(AssertSubscriber.create(1));
        client.request(1);
        client.request(1);
        assertEquals(1, asked.get());

        engine.get().emit(chunk(FINISH));

        assertEquals(1, client.getItems().size());
        assertEquals(2, asked.get(), "the next chunk is asked for once the first one's event went out");
    }

    /** Chunks from one thread, demand from another, one event at a time: every event arrives, once, in order. */
    @Test
    void chunksAndDemandFromTwoThreadsLoseNothing() throws Exception {
        int count = 20_000;
        AtomicReference<MultiEmitter<? super CompletionChunk>> engine = new AtomicReference<>();
        AssertSubscriber<GenerateResponse> client = CompletionStreams.events(
                Multi.createFrom().<CompletionChunk>emitter(engine::set), "r")
                .subscribe().withSubscriber(AssertSubscriber.create(0));
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<?> engineSide = thread.submit(() -> {
                for (int i = 0; i < count; i++) {
                    engine.get().emit(chunk("{\"choices\":[{\"index\":0,\"text\":\"" + i
                            + "\",\"finish_reason\":null}]}"));
                }
                engine.get().complete();
            });
            for (int i = 0; i < count; i++) {
                client.request(1);
            }
            engineSide.get();
            client.awaitCompletion(Duration.ofSeconds(30));
        } finally {
            thread.shutdownNow();
        }
        List<String> texts = texts(client.getItems());
        assertEquals(count, texts.size());
        for (int i = 0; i < count; i++) {
            assertEquals(Integer.toString(i), texts.get(i));
        }
    }

    @Test
    void aRequestOfZeroIsRefused() {
        AssertSubscriber<GenerateResponse> client = CompletionStreams.events(chunks(FINISH), "r")
                .subscribe().withSubscriber(AssertSubscriber.create(0));
        client.request(0);
        assertInstanceOf(IllegalArgumentException.class, client.getFailure());
    }

    private static Multi<CompletionChunk> chunks(String... json) {
        List<CompletionChunk> chunks = new ArrayList<>();
        for (String j : json) {
            chunks.add(chunk(j));
        }
        return Multi.createFrom().iterable(chunks);
    }

    private static CompletionChunk chunk(String json) {
        return CompletionChunk.read(json.getBytes(StandardCharsets.UTF_8));
    }

    private static List<String> texts(List<GenerateResponse> events) {
        return events.stream().filter(GenerateResponse::hasToken).map(e -> e.getToken().getText()).toList();
    }
}
