package io.handoff.connector.spi;

/** How an engine family lets a running leg be stopped. */
public enum AbortMode {
    /** Closing the leg's connection is the only abort (the connector cancels its HTTP exchange). */
    CLOSE_CONNECTION,
    /** The engine has an abort endpoint, and {@link EngineConnector#abort} calls it (closing also helps). */
    ABORT_ENDPOINT,
    /** A native Abort RPC (openengine.v1 Control.Abort). */
    ABORT_RPC
}
