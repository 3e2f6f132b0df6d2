package io.handoff.simulator.openengine;

import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.StoppingOptions;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimTestBase;
import org.junit.jupiter.api.AfterEach;
import java.util.ArrayList;
import java.util.List;

/** Engines and requests shared by the openengine simulator tests. */
abstract class OeTestSupport extends SimTestBase {
    static final String PROMPT = "The quick brown fox jumps over the lazy dog again and again";
    private final List<OeClient> clients = new ArrayList<>();

    static OpenEngineConfig cfg(Role role) {
        OpenEngineConfig c = new OpenEngineConfig();
        c.role = role;
        return c;
    }

    OpenEngineSimEngine engine(Role role) {
        return start(new OpenEngineSimEngine(cfg(role)));
    }

    OeClient client(OpenEngineSimEngine e) {
        OeClient c = new OeClient(e);
        clients.add(c);
        return c;
    }

    @AfterEach
    void closeClients() {
        clients.forEach(OeClient::close);
        clients.clear();
    }

    static GenerateRequest request(String id, String prompt, int maxTokens) {
        return GenerateRequest.newBuilder().setRequestId(id).setModel("sim-model").setPrompt(prompt)
            .setStopping(StoppingOptions.newBuilder().setMaxTokens(maxTokens)).build();
    }

    static GenerateRequest withSession(GenerateRequest r, KvSessionRef ref) {
        return r.toBuilder().setKv(KvOptions.newBuilder().setSession(ref)).build();
    }

    /** The concatenated text of output 0. */
    static String text(List<GenerateResponse> events) {
        StringBuilder sb = new StringBuilder();
        for (GenerateResponse e : events) {
            if (e.hasToken() && e.getToken().getOutputIndex() == 0) {
                sb.append(e.getToken().getText());
            }
        }
        return sb.toString();
    }

    static KvSessionRef readyRef(OeClient.Stream prefill) {
        return prefill.events.get(prefill.events.size() - 1).getPrefillReady().getKvSession();
    }
}
