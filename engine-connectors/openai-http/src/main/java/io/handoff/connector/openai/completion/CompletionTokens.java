package io.handoff.connector.openai.completion;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.openengine.v1.LogProb;
import io.handoff.openengine.v1.TokenInfo;
import io.handoff.openengine.v1.TokenOutput;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The new tokens of one choice delta: its text, its token ids (engines that return them: {@code token_ids}) and
 * its logprobs, in the completions shape ({@code tokens}, {@code token_logprobs}, {@code top_logprobs}) or the chat
 * shape ({@code content: [{token, logprob, top_logprobs}]}).
 */
final class CompletionTokens {

    private static final String TOKEN_ID_PREFIX = "token_id:";

    private CompletionTokens() {
    }

    /** The TokenOutput of a choice, or null when the delta carries nothing new (e.g. a bare finish). */
    static TokenOutput of(CompletionChunk.Choice choice) {
        String text = choice.text() == null ? "" : choice.text();
        if (choice.logprobs() == null) {
            return withIdsOnly(choice.index(), text, choice.tokenIds());
        }
        List<TokenInfo> tokens = tokens(choice);
        if (text.isEmpty() && tokens.isEmpty()) {
            return null;
        }
        TokenOutput.Builder out = TokenOutput.newBuilder().setOutputIndex(choice.index()).setText(text);
        return (tokens.isEmpty() ? out : out.addAllTokens(tokens)).build();
    }

    /**
     * The usual delta, with no logprobs: its ids go straight into the output, without the lists of builders that
     * logprobs need (this runs for every relayed token).
     */
    private static TokenOutput withIdsOnly(int index, String text, int[] ids) {
        if (text.isEmpty() && (ids == null || ids.length == 0)) {
            return null;
        }
        TokenOutput.Builder out = TokenOutput.newBuilder().setOutputIndex(index).setText(text);
        for (int i = 0; ids != null && i < ids.length; i++) {
            out.addTokens(TokenInfo.newBuilder().setTokenId(ids[i]));
        }
        return out.build();
    }

    private static List<TokenInfo> tokens(CompletionChunk.Choice choice) {
        int[] ids = choice.tokenIds();
        JsonNode lp = choice.logprobs();
        if (lp == null && (ids == null || ids.length == 0)) {
            return List.of();
        }
        List<TokenInfo.Builder> infos = new ArrayList<>();
        if (lp != null && lp.path("content").isArray()) {
            for (JsonNode entry : lp.get("content")) {
                TokenInfo.Builder b = TokenInfo.newBuilder().setToken(entry.path("token").asText(""));
                if (entry.path("logprob").isNumber()) {
                    b.setLogprob(entry.get("logprob").asDouble());
                }
                for (JsonNode alt : entry.path("top_logprobs")) {
                    b.addCandidates(candidate(alt.path("token").asText(""), alt.path("logprob").asDouble()));
                }
                infos.add(b);
            }
        } else if (lp != null && lp.path("tokens").isArray()) {
            JsonNode values = lp.path("token_logprobs");
            JsonNode tops = lp.path("top_logprobs");
            for (int i = 0; i < lp.get("tokens").size(); i++) {
                String token = lp.get("tokens").get(i).asText("");
                TokenInfo.Builder b = TokenInfo.newBuilder().setToken(token);
                idFromText(token, b);
                if (values.path(i).isNumber()) {
                    b.setLogprob(values.get(i).asDouble());
                }
                JsonNode top = tops.path(i);
                for (Iterator<Map.Entry<String, JsonNode>> it = top.fields(); it.hasNext();) {
                    Map.Entry<String, JsonNode> alt = it.next();
                    b.addCandidates(candidate(alt.getKey(), alt.getValue().asDouble()));
                }
                infos.add(b);
            }
        }
        for (int i = 0; ids != null && i < ids.length; i++) {
            if (i == infos.size()) {
                infos.add(TokenInfo.newBuilder());
            }
            infos.get(i).setTokenId(ids[i]);
        }
        List<TokenInfo> out = new ArrayList<>(infos.size());
        infos.forEach(b -> out.add(b.build()));
        return out;
    }

    private static LogProb candidate(String token, double logprob) {
        LogProb.Builder c = LogProb.newBuilder().setToken(token).setLogprob(logprob);
        if (token.startsWith(TOKEN_ID_PREFIX)) {
            try {
                c.setTokenId(Integer.parseInt(token.substring(TOKEN_ID_PREFIX.length())));
            } catch (NumberFormatException ignored) {
                // a token whose text merely starts with the prefix: keep the text only
            }
        }
        return c.build();
    }

    /** Engines asked to render tokens as ids write {@code token_id:N}. */
    private static void idFromText(String token, TokenInfo.Builder b) {
        if (token.startsWith(TOKEN_ID_PREFIX)) {
            try {
                b.setTokenId(Integer.parseInt(token.substring(TOKEN_ID_PREFIX.length())));
            } catch (NumberFormatException ignored) {
                // ordinary text
            }
        }
    }
}
