package io.handoff.gateway.orchestration;

import io.handoff.gateway.routing.EndpointVerdict;
import io.handoff.gateway.routing.PoolShortage;
import io.handoff.gateway.runtime.DrainState;
import io.handoff.openengine.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The reasons that tell apart refusals sharing an OpenEngine code, for the causes the fleet tests cannot provoke
 * without stopping their gateway for good (a replica's stop) or a route of their own (a pool whose endpoints are all
 * full, with no queue to wait in). The Quarkus tests count the others on the metric itself.
 */
class RefusalReasonTest {

    @Test
    void aReplicaStoppingIsToldApartFromTheDeploymentsDrain() {
        DrainState drain = new DrainState();
        drain.set(Instant.EPOCH);
        GenerateRefusal draining = GenerateRefusal.draining(drain, drain.refusal("new Generate"));
        assertEquals(ErrorCode.ERROR_CODE_DRAINING, draining.code());
        assertEquals("deployment-draining", draining.reason().label());

        drain.stop();
        GenerateRefusal stopping = GenerateRefusal.draining(drain, drain.refusal("new Generate"));
        assertEquals(ErrorCode.ERROR_CODE_DRAINING, stopping.code(), "the same code either way");
        assertEquals("replica-stopping", stopping.reason().label(), "stopping wins, as the message says");
    }

    @Test
    void aPoolWithoutAnEndpointSaysWhichShortageItIs() {
        assertEquals("endpoints-full", refusal(PoolShortage.Kind.FULL, List.of()).reason().label());
        assertTrue(refusal(PoolShortage.Kind.FULL, List.of()).awaitsSlot(), "full endpoints may be waited out");
        assertEquals("breakers-open", refusal(PoolShortage.Kind.OUT_OF_SERVICE, List.of()).reason().label());
        assertEquals("pool-empty", refusal(PoolShortage.Kind.EMPTY, List.of()).reason().label());
        assertEquals(ErrorCode.ERROR_CODE_INTERNAL, refusal(PoolShortage.Kind.EMPTY, List.of()).code());
        assertEquals("wrong-role-endpoints", refusal(PoolShortage.Kind.MISCONFIGURED,
                List.of(EndpointVerdict.WRONG_ROLE + ": endpoint p-0 answers as DECODE")).reason().label());
        assertEquals("wrong-model-endpoints", refusal(PoolShortage.Kind.MISCONFIGURED,
                List.of(EndpointVerdict.WRONG_MODEL + ": endpoint d-0 does not serve model 'm'")).reason().label());
    }

    @Test
    void everyLabelIsLowerKebabCaseAndTheSetIsBounded() {
        List<String> labels = Arrays.stream(RefusalReason.values()).map(RefusalReason::label).toList();
        labels.forEach(label -> assertTrue(label.matches("[a-z]+(-[a-z]+)*"), label));
        assertEquals(labels.size(), labels.stream().distinct().count());
        assertTrue(labels.size() < 32, "a label for an operator's legend, not an open set");
    }

    private static GenerateRefusal refusal(PoolShortage.Kind kind, List<String> verdicts) {
        return GenerateRefusal.noEndpoint("r", "decode", new PoolShortage(kind, "decode", verdicts));
    }
}
