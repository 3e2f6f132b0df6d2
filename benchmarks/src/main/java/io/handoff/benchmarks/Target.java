package io.handoff.benchmarks;

/**
 * One way of running a streamed generation of {@code max-tokens} tokens: the two vLLM legs sent directly, or one call
 * through the gateway. Implementations are non-blocking: {@link #send} returns at once and the listener is called
 * later, on the client's own I/O threads.
 */
interface Target extends AutoCloseable {

    /** Name for the report ("direct (two legs)", "gateway gRPC Generate", ...). */
    String name();

    /** One word for traces and the RESULT line: direct, grpc or http. */
    String key();

    /** Starts one request; the listener hears exactly one of completed or failed, after at most one firstToken. */
    void send(String requestId, String prompt, Listener listener);

    @Override
    void close();

    /** What one request reports. The caller takes the times; a target only says when. */
    interface Listener {

        /** The first token's text reached the client. */
        void firstToken();

        /** The stream ended well: every token arrived, the finish reason was "length", and the end marker came. */
        void completed();

        void failed(String operation, Throwable cause);
    }
}
