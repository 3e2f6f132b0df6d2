package io.handoff.connector.openengine;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.ResponseOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which GenerateRequest field paths the connector carries. The engine speaks the same schema, so every field passes
 * through unchanged, except:
 * <ul>
 * <li>gateway-owned: {@code kv.session} (the gateway puts the producer's ref there; a client's is refused) and
 * Handoff's own {@code kv.transfer_disposition} and {@code kv.schedule_style} (the gateway consumed them; an upstream
 * engine does not know them, so they are not sent);</li>
 * <li>refused on a handoff: the prompt-logprob fields, because their answer (PromptOutput) comes from the prefill
 * leg and the SPI's PrefillResult.Ready has no place to carry it. A bypass ({@code decodeLocally}) carries them.</li>
 * </ul>
 * Paths are one level deep for the option messages ({@code sampling.temperature}), whole for everything else
 * ({@code media}, {@code extra}, {@code token_ids}).
 */
final class RequestFields {
    static final Set<String> GATEWAY_OWNED = Set.of("kv.session", "kv.transfer_disposition", "kv.schedule_style");
    static final Set<String> REFUSED_ON_HANDOFF = Set.of("response.return_prompt_logprobs",
        "response.prompt_candidates", "response.prompt_logprob_start");
    /** Sub-messages whose fields are listed one by one. */
    private static final Set<String> EXPANDED = Set.of("sampling", "stopping", "response", "kv", "guided");

    private RequestFields() {
    }

    /** Every leaf path of GenerateRequest, as this connector names them. */
    static Set<String> allPaths() {
        Set<String> out = new TreeSet<>();
        for (FieldDescriptor f : GenerateRequest.getDescriptor().getFields()) {
            if (EXPANDED.contains(f.getName())) {
                Descriptor sub = f.getMessageType();
                for (FieldDescriptor g : sub.getFields()) {
                    out.add(f.getName() + "." + g.getName());
                }
            } else {
                out.add(f.getName());
            }
        }
        return out;
    }

    /** What the capabilities declare as carried losslessly on a handoff. */
    static Set<String> carried() {
        Set<String> out = new TreeSet<>(allPaths());
        out.removeAll(GATEWAY_OWNED);
        out.removeAll(REFUSED_ON_HANDOFF);
        return out;
    }

    /** The refused paths set on this request (prompt logprobs asked for in a way that would produce output). */
    static List<String> refusedIn(GenerateRequest r) {
        List<String> out = new ArrayList<>();
        ResponseOptions o = r.getResponse();
        if (o.hasReturnPromptLogprobs() && o.getReturnPromptLogprobs()) {
            out.add("response.return_prompt_logprobs");
        }
        if (o.hasPromptCandidates()) {
            out.add("response.prompt_candidates");
        }
        if (o.hasPromptLogprobStart()) {
            out.add("response.prompt_logprob_start");
        }
        return out;
    }
}
