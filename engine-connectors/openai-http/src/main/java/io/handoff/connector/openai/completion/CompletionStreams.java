package io.handoff.connector.openai.completion;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;

import java.util.ArrayList;
import java.util.List;

/** Completion chunk streams as openengine.v1 event streams. */
public final class CompletionStreams {

    private CompletionStreams() {
    }

    /**
     * The events of a chunk stream. Cancelling the result cancels {@code chunks} (and so closes its exchange); a
     * chunk that cannot be mapped fails the stream, which cancels {@code chunks} too. On a failure the event held
     * back for usage is still delivered before the failure.
     */
    public static Multi<GenerateResponse> events(Multi<CompletionChunk> chunks, String requestId) {
        return new ChunkEventStream(chunks, requestId);
    }

    /** The events of one complete (non-streaming) answer. */
    public static List<GenerateResponse> events(JsonNode answer, String requestId) {
        CompletionEvents mapper = new CompletionEvents(requestId);
        List<GenerateResponse> out = new ArrayList<>(mapper.accept(answer));
        out.addAll(mapper.end());
        return out;
    }
}
