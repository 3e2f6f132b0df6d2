/**
 * The OpenAI {@code /v1/completions} dialect shared by engine families: which openengine.v1
 * {@code GenerateRequest} fields a request sets ({@link io.handoff.connector.openai.completion.RequestFieldPaths}),
 * the completion body built from it with one overridable hook per field group
 * ({@link io.handoff.connector.openai.completion.CompletionBodyBuilder}), and completion answers and stream chunks
 * turned into openengine.v1 {@code GenerateResponse} events with the upstream event rules
 * ({@link io.handoff.connector.openai.completion.CompletionEvents}).
 *
 * <p>Engine-neutral: a family's connector subclasses the builder where its engine names a field differently and
 * declares which field paths it carries; everything else is refused before a request is sent.
 */
package io.handoff.connector.openai.completion;
