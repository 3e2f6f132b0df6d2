package io.handoff.gateway.orchestration;

import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GenerationFinished;
import io.handoff.openengine.v1.TokenOutput;
import io.handoff.openengine.v1.Usage;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The upstream event rules on the relayed stream, whatever the connector sends. */
class EventRelayTest {

    private static GenerateResponse token(String requestId, Integer index, String text) {
        TokenOutput.Builder t = TokenOutput.newBuilder().setText(text);
        if (index != null) {
            t.setOutputIndex(index);
        }
        return GenerateResponse.newBuilder().setRequestId(requestId).setToken(t).build();
    }

    private static GenerateResponse finished(String requestId, int index, Usage usage) {
        GenerateResponse.Builder b = GenerateResponse.newBuilder().setRequestId(requestId)
                .setFinished(GenerationFinished.newBuilder().setOutputIndex(index)
                        .setReason(FinishReason.FINISH_REASON_LENGTH));
        if (usage != null) {
            b.setUsage(usage);
        }
        return b.build();
    }

    @Test
    void anEventThatFollowsTheRulesIsPassedOnAsItIs() {
        EventRelay relay = new EventRelay("r", 1);
        GenerateResponse t = token("r", 0, "a");
        assertSame(t, relay.accept(t));
        assertTrue(relay.started());
    }

    @Test
    void theClientsIdAndAnExplicitIndexAreSetAndUsageRidesOnlyTheFinalEvent() {
        EventRelay relay = new EventRelay("client-id", 2);
        Usage usage = Usage.newBuilder().setPromptTokens(3).setCompletionTokens(2).setTotalTokens(5).build();
        GenerateResponse first = relay.accept(token("engine-id", null, "a"));
        assertEquals("client-id", first.getRequestId());
        assertTrue(first.getToken().hasOutputIndex());
        assertEquals(0, first.getToken().getOutputIndex());

        GenerateResponse finishedZero = relay.accept(finished("engine-id", 0, usage));
        assertFalse(finishedZero.hasUsage(), "usage only on the last event");
        assertNull(relay.accept(token("engine-id", 0, "late")), "nothing for an output after its finish");
        assertNull(relay.accept(finished("engine-id", 0, null)), "one finish per output");
        assertNull(relay.accept(GenerateResponse.newBuilder().setUsage(usage).build()), "a usage-only event");
        assertFalse(relay.done());

        GenerateResponse last = relay.accept(finished("engine-id", 1, null));
        assertEquals(usage, last.getUsage(), "the newest usage, on the final event");
        assertTrue(relay.done());
        assertNull(relay.accept(token("engine-id", 1, "after the end")));
    }
}
