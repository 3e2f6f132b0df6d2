/**
 * The OpenAI {@code /v1/completions} and {@code /v1/chat/completions} dialect shared by engine families: which
 * openengine.v1 {@code GenerateRequest} fields a request sets ({@link io.handoff.connector.openai.completion.RequestFieldPaths}),
 * the completion body built from it with one overridable hook per field group
 * ({@link io.handoff.connector.openai.completion.CompletionBodyBuilder}), and completion answers and stream chunks
 * turned into openengine.v1 {@code GenerateResponse} events with the upstream event rules
 * ({@link io.handoff.connector.openai.completion.CompletionEvents}).
 *
 * <p>A chat (a request with no prompt whose {@code extra} holds {@code messages},
 * {@link io.handoff.connector.spi.InputKind#CHAT_MESSAGES}) goes to the chat endpoint through the same builder and
 * the same event mapper; {@link io.handoff.connector.openai.completion.ChatRequests} names the endpoint and checks a
 * chat before anything is sent.
 *
 * <p>Engine-neutral: a family's connector subclasses the builder where its engine names a field differently and
 * declares which field paths and {@code extra} keys it carries
 * ({@link io.handoff.connector.openai.completion.FamilyFields}); everything else is refused before a request is sent.
 */
package io.handoff.connector.openai.completion;
