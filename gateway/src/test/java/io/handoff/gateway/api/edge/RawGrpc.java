package io.handoff.gateway.api.edge;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;

/**
 * gRPC calls whose messages are bytes, sent as they are: a client stub would refuse to serialize what the fuzzer
 * sends (invalid UTF-8, truncated fields, nesting past the parser's limit). The answer is the call's status, or OK
 * with the number of messages the server sent.
 */
final class RawGrpc {

    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private RawGrpc() {
    }

    /** What a call ended with: its status and how many messages came before it. */
    record Answer(Status status, int messages) {
    }

    /**
     * One call of {@code fullMethod} with one request message. {@code streaming}: a server-streaming method, read to
     * its end. Every call has a deadline, so a server that never answers is an answer too (DEADLINE_EXCEEDED).
     */
    static Answer call(Channel channel, String fullMethod, boolean streaming, Metadata headers, byte[] message,
            long deadlineMillis) {
        MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(streaming ? MethodDescriptor.MethodType.SERVER_STREAMING : MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(fullMethod).setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
        Channel withHeaders = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(headers));
        CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS);
        int messages = 0;
        try {
            if (streaming) {
                Iterator<byte[]> answers = ClientCalls.blockingServerStreamingCall(withHeaders, method, options,
                        message);
                while (answers.hasNext()) {
                    answers.next();
                    messages++;
                }
            } else {
                ClientCalls.blockingUnaryCall(withHeaders, method, options, message);
                messages++;
            }
            return new Answer(Status.OK, messages);
        } catch (StatusRuntimeException e) {
            return new Answer(e.getStatus(), messages);
        }
    }
}
