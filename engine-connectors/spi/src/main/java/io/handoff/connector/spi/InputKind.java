package io.handoff.connector.spi;

/** The prompt forms an engine family accepts. */
public enum InputKind {
    TEXT,
    TOKEN_IDS
}
