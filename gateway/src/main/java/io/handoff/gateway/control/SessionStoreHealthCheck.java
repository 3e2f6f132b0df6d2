package io.handoff.gateway.control;

import io.handoff.gateway.session.store.SessionStore;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

import java.time.Duration;

/** Readiness includes the session store: a replica that cannot reach Redis cannot serve a session. */
@Readiness
@ApplicationScoped
public class SessionStoreHealthCheck implements AsyncHealthCheck {

    private final SessionStore store;

    public SessionStoreHealthCheck(SessionStore store) {
        this.store = store;
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        String name = "session-store-" + store.kind();
        return store.ping()
                .ifNoItem().after(Duration.ofSeconds(2)).fail()
                .map(ok -> HealthCheckResponse.named(name).up().build())
                .onFailure().recoverWithItem(failure -> HealthCheckResponse.named(name).down()
                        .withData("error", String.valueOf(failure.getMessage())).build());
    }
}
