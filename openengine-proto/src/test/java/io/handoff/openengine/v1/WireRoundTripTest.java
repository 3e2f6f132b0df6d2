package io.handoff.openengine.v1;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Duration;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.ListValue;
import com.google.protobuf.Message;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Timestamp;
import com.google.protobuf.UnknownFieldSet;
import com.google.protobuf.Value;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Serialise / parse round trips, and a check that an upstream-only client keeps our additions as unknown fields. */
class WireRoundTripTest {

    private static Struct extra() {
        return Struct.newBuilder()
                .putFields("remote_host", Value.newBuilder().setStringValue("10.0.0.7").build())
                .putFields("remote_port", Value.newBuilder().setNumberValue(5600).build())
                .putFields("big_id", Value.newBuilder().setStringValue("18446744073709551615").build())
                .putFields("do_remote_decode", Value.newBuilder().setBoolValue(true).build())
                .putFields("none", Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build())
                .putFields("remote_block_ids", Value.newBuilder().setListValue(ListValue.newBuilder()
                        .addValues(Value.newBuilder().setNumberValue(1))
                        .addValues(Value.newBuilder().setNumberValue(2))).build())
                .putFields("nested", Value.newBuilder().setStructValue(Struct.newBuilder()
                        .putFields("k", Value.newBuilder().setStringValue("v").build())).build())
                .build();
    }

    private static KvSessionRef sessionRef() {
        return KvSessionRef.newBuilder()
                .setSessionId("sess-1")
                .setTransferBackend("nixl")
                .addEndpoints(KvEndpoint.newBuilder().setHost("10.0.0.7").setPort(5600).setProtocol("tcp"))
                .setDpRank(3)
                .setAttributesStruct(extra())
                .build();
    }

    private static GenerateRequest.Builder request() {
        return GenerateRequest.newBuilder()
                .setRequestId("req-1")
                .setModel("m")
                .setSampling(SamplingParams.newBuilder().setTemperature(0.0).setSeed(42))
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(16)
                        .addConditions(StopCondition.newBuilder().setStopText("\n")))
                .setResponse(ResponseOptions.newBuilder().setReturnOutputLogprobs(true)
                        .setOutputCandidates(CandidateTokenSelection.newBuilder().setTopN(5)))
                .setKv(KvOptions.newBuilder().setSession(sessionRef()).setCacheSalt("salt")
                        .setTransferDisposition(KvTransferDisposition.KV_TRANSFER_DISPOSITION_REQUIRED)
                        .setScheduleStyle(KvScheduleStyle.KV_SCHEDULE_STYLE_CONCURRENT))
                .setGuided(GuidedDecoding.newBuilder().setChoice(ChoiceConstraint.newBuilder().addChoices("a")))
                .addMedia(MediaItem.newBuilder().setModality(Modality.MODALITY_IMAGE)
                        .setRawBytes(ByteString.copyFrom(new byte[] {0, 1, 2})))
                .setExtra(extra());
    }

    @Test
    void generateRequestRoundTripsWithEachInput() throws Exception {
        GenerateRequest prompt = request().setPrompt("hello").build();
        GenerateRequest tokens = request().setTokenIds(TokenIds.newBuilder().addIds(1).addIds(0).addIds((int) 4_000_000_000L)) // uint32 above 2^31
                .build();
        GenerateRequest none = request().build();

        for (GenerateRequest original : List.of(prompt, tokens, none)) {
            GenerateRequest parsed = GenerateRequest.parseFrom(original.toByteArray());
            assertEquals(original, parsed);
            assertEquals(original.getInputCase(), parsed.getInputCase());
            assertEquals(extra(), parsed.getExtra());
        }
        assertEquals(GenerateRequest.InputCase.PROMPT, GenerateRequest.parseFrom(prompt.toByteArray()).getInputCase());
        assertEquals(GenerateRequest.InputCase.TOKEN_IDS, GenerateRequest.parseFrom(tokens.toByteArray()).getInputCase());
        assertEquals(GenerateRequest.InputCase.INPUT_NOT_SET, GenerateRequest.parseFrom(none.toByteArray()).getInputCase());
        // proto3 optional: an explicit zero survives, an unset field stays unset.
        GenerateRequest parsed = GenerateRequest.parseFrom(prompt.toByteArray());
        assertTrue(parsed.getSampling().hasTemperature());
        assertTrue(!parsed.getSampling().hasTopP());
    }

    @Test
    void kvSessionRoundTrips() throws Exception {
        Timestamp t = Timestamp.newBuilder().setSeconds(1_800_000_000L).setNanos(5).build();
        KvSession original = KvSession.newBuilder()
                .setRef(sessionRef())
                .setState(KvSessionState.KV_SESSION_STATE_READY)
                .setScheduleStyle(KvScheduleStyle.KV_SCHEDULE_STYLE_GENERATION_FIRST)
                .setTransferDisposition(KvTransferDisposition.KV_TRANSFER_DISPOSITION_BYPASS)
                .setLeaseExpiresAt(t)
                .setEpoch(Long.MIN_VALUE) // max uint64 bit pattern
                .setRequestId("req-1")
                .setModel("m")
                .setTerminalReason("")
                .setCreatedAt(t)
                .setUpdatedAt(t)
                .setLease(Duration.newBuilder().setSeconds(30))
                .setRenewals(2)
                .setTombstoneExpiresAt(t)
                .setAttributes(extra())
                .build();
        assertEquals(original, KvSession.parseFrom(original.toByteArray()));

        ReleaseKvSessionResponse release = ReleaseKvSessionResponse.newBuilder()
                .setSession(original).setAlreadyTerminal(true).build();
        assertEquals(release, ReleaseKvSessionResponse.parseFrom(release.toByteArray()));

        RenewKvSessionRequest renew = RenewKvSessionRequest.newBuilder().setSessionId("sess-1").setExpectedEpoch(0).build();
        RenewKvSessionRequest renewParsed = RenewKvSessionRequest.parseFrom(renew.toByteArray());
        assertTrue(renewParsed.hasExpectedEpoch(), "explicit expected_epoch = 0 must keep presence");
    }

    /**
     * Rebuilds the eight upstream files with every field numbered >= 100 removed (what a client generated from
     * the upstream schema sees) and checks that such a client reads our messages, keeps our additions as
     * unknown fields, and writes them back unchanged.
     */
    @Test
    void upstreamOnlyClientIgnoresAndPreservesOurAdditions() throws Exception {
        Map<String, FileDescriptor> upstream = upstreamView();

        GenerateRequest ours = request().setPrompt("hello").build();
        Descriptor reqType = upstream.get("generation.proto").findMessageTypeByName("GenerateRequest");
        DynamicMessage seen = DynamicMessage.parseFrom(reqType, ours.toByteArray());

        Message kv = (Message) seen.getField(reqType.findFieldByName("kv"));
        assertEquals(3, kv.getDescriptorForType().getFields().size(), "upstream KvOptions has 3 fields");
        UnknownFieldSet unknown = kv.getUnknownFields();
        assertTrue(unknown.hasField(100) && unknown.hasField(101), "additions kept as unknown fields: " + unknown);
        assertEquals("salt", kv.getField(kv.getDescriptorForType().findFieldByName("cache_salt")));
        assertEquals("hello", seen.getField(reqType.findFieldByName("prompt")));
        assertEquals(ours, GenerateRequest.parseFrom(seen.toByteArray()));

        ServerInfo info = ServerInfo.newBuilder().setEngineName("e").setSchemaRevision(1)
                .setKvConnector(KvConnectorInfo.newBuilder().setEnabled(true).setTransferBackend("nixl")
                        .addSupportedScheduleStyles(KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST)
                        .setSupportsCallerAllocation(true)
                        .setSessionLimits(KvSessionLimits.newBuilder().setMaxLiveSessionsPerTenant(10)))
                .build();
        Descriptor infoType = upstream.get("server.proto").findMessageTypeByName("ServerInfo");
        DynamicMessage seenInfo = DynamicMessage.parseFrom(infoType, info.toByteArray());
        Message connector = (Message) seenInfo.getField(infoType.findFieldByName("kv_connector"));
        assertEquals(Boolean.TRUE, connector.getField(connector.getDescriptorForType().findFieldByName("enabled")));
        assertTrue(connector.getUnknownFields().hasField(106));
        assertEquals(info, ServerInfo.parseFrom(seenInfo.toByteArray()));
    }

    private static Map<String, FileDescriptor> upstreamView() throws DescriptorValidationException {
        Map<String, FileDescriptor> ours = WireTable.files();
        Map<String, FileDescriptor> byPath = new HashMap<>();
        for (FileDescriptor fd : ours.values()) {
            byPath.put(fd.getName(), fd);
        }
        Map<String, FileDescriptor> built = new HashMap<>();
        for (String file : WireTable.UPSTREAM_FILES) {
            prune(byPath.get("openengine/v1/" + file), built);
        }
        Map<String, FileDescriptor> result = new HashMap<>();
        for (String file : WireTable.UPSTREAM_FILES) {
            result.put(file, assertNotNullAndGet(built.get("openengine/v1/" + file)));
        }
        return result;
    }

    private static FileDescriptor assertNotNullAndGet(FileDescriptor fd) {
        assertNotNull(fd);
        return fd;
    }

    private static FileDescriptor prune(FileDescriptor fd, Map<String, FileDescriptor> built)
            throws DescriptorValidationException {
        FileDescriptor done = built.get(fd.getName());
        if (done != null) {
            return done;
        }
        FileDescriptorProto.Builder proto = fd.toProto().toBuilder().clearDependency();
        List<FileDescriptor> deps = new ArrayList<>();
        for (FileDescriptor dep : fd.getDependencies()) {
            String depFile = dep.getName().substring(dep.getName().lastIndexOf('/') + 1);
            if (dep.getName().startsWith("google/protobuf/")) {
                deps.add(dep);
            } else if (WireTable.UPSTREAM_FILES.contains(depFile)) {
                deps.add(prune(dep, built));
            } else {
                continue; // Handoff-only file: an upstream client does not have it
            }
            proto.addDependency(dep.getName());
        }
        for (DescriptorProto.Builder msg : proto.getMessageTypeBuilderList()) {
            // Drop fields >= 100 and any oneof (the synthetic ones of proto3 optional) left without members.
            List<FieldDescriptorProto> kept = new ArrayList<>();
            for (FieldDescriptorProto f : msg.getFieldList()) {
                if (f.getNumber() < 100) {
                    kept.add(f);
                }
            }
            List<OneofDescriptorProto> oneofs = new ArrayList<>();
            Map<Integer, Integer> newIndex = new HashMap<>();
            for (int i = 0; i < msg.getOneofDeclCount(); i++) {
                final int index = i;
                if (kept.stream().anyMatch(f -> f.hasOneofIndex() && f.getOneofIndex() == index)) {
                    newIndex.put(i, oneofs.size());
                    oneofs.add(msg.getOneofDecl(i));
                }
            }
            msg.clearField().clearOneofDecl().addAllOneofDecl(oneofs);
            for (FieldDescriptorProto f : kept) {
                msg.addField(f.hasOneofIndex() ? f.toBuilder().setOneofIndex(newIndex.get(f.getOneofIndex())).build() : f);
            }
        }
        FileDescriptor result = FileDescriptor.buildFrom(proto.build(), deps.toArray(new FileDescriptor[0]));
        built.put(fd.getName(), result);
        return result;
    }
}
