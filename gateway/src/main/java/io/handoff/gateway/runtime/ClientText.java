package io.handoff.gateway.runtime;

import java.util.regex.Pattern;

/**
 * The last guard on text a client reads: no internal address leaves the gateway. Connectors name endpoints by their
 * configured names and keep socket addresses in a failure's cause, but an engine's own error text can name its peers
 * (a KV transfer "from 10.0.0.7:5600"); whatever looks like an address is replaced. The unchanged text goes to the
 * log and the trace.
 */
public final class ClientText {

    public static final String ADDRESS = "[address]";

    private static final Pattern ADDRESSES = Pattern.compile(String.join("|",
            // URLs of any scheme (a colon or full stop after one ends the sentence, not the URL)
            "\\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\\s,;)'\"\\]}>]*[^\\s,;:.)'\"\\]}>]",
            // bracketed IPv6, with or without a port
            "\\[[0-9a-fA-F:.]*:[0-9a-fA-F:.]*\\](?::\\d{1,5})?",
            // IPv4, with or without a port (Java prints socket addresses as host/1.2.3.4:5)
            "\\b\\d{1,3}(?:\\.\\d{1,3}){3}(?::\\d{1,5})?\\b",
            // host names with a port
            "\\b(?:localhost|[a-zA-Z0-9-]+(?:\\.[a-zA-Z0-9-]+)+):\\d{2,5}\\b"));

    private ClientText() {
    }

    /** The text with every address in it replaced by {@value #ADDRESS}. */
    public static String withoutAddresses(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        return ADDRESSES.matcher(text).replaceAll(ADDRESS);
    }
}
