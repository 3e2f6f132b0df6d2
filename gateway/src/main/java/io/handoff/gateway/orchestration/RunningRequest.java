package io.handoff.gateway.orchestration;

/** A request running on this replica, as Control.Abort and the duplicate check see it. */
public interface RunningRequest {

    String requestId();

    String tenant();

    /** Stops the request: its legs are aborted, unfinished outputs end as CANCELLED, its session too. */
    void abort(String reason);
}
