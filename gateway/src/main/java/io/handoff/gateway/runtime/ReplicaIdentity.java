package io.handoff.gateway.runtime;

import jakarta.inject.Singleton;

import java.net.InetAddress;
import java.util.UUID;

/**
 * This gateway replica's name among its peers on one store: who holds a cleanup claim, who owns a request.
 * Configurable for stable names; otherwise host name plus a random suffix, so a restarted replica is a new one.
 */
@Singleton
public class ReplicaIdentity {

    private final String id;

    public ReplicaIdentity(ReplicaConfig config) {
        this.id = config.replicaId().filter(s -> !s.isBlank()).orElseGet(ReplicaIdentity::generated);
    }

    private static String generated() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "gateway";
        }
        return host + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    public String id() {
        return id;
    }
}
