package io.handoff.simulator.openengine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.ClientInterceptors;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimEngine;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A Generate's trace context arrives as gRPC metadata, and is kept like an HTTP engine's. */
class OeTraceContextTest extends OeTestSupport {

    private static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-b9c7c989f97918e1-01";

    @Test
    void aGeneratesTraceparentMetadataIsKept() {
        OpenEngineSimEngine e = engine(Role.DECODE);
        OeClient client = client(e);
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of(SimEngine.TRACEPARENT, Metadata.ASCII_STRING_MARSHALLER), TRACEPARENT);
        InferenceGrpc.newBlockingStub(ClientInterceptors.intercept(client.channel,
            MetadataUtils.newAttachHeadersInterceptor(headers))).generate(request("t1", PROMPT, 2))
            .forEachRemaining(event -> { });
        InferenceGrpc.newBlockingStub(client.channel).generate(request("t2", PROMPT, 2))
            .forEachRemaining(event -> { });
        assertEquals(List.of(TRACEPARENT, ""), e.receivedTraceParents());
    }
}
