package io.handoff.connector.openai.http;

/**
 * A complete answer of an engine endpoint.
 *
 * @param status the HTTP status
 * @param body   the body as text (UTF-8)
 */
public record HttpReply(int status, String body) {

    public boolean ok() {
        return status >= 200 && status < 300;
    }
}
