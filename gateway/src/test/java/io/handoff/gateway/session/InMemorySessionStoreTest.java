package io.handoff.gateway.session;

import io.handoff.gateway.session.store.InMemorySessionStore;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.session.store.StoreSettings;

class InMemorySessionStoreTest extends SessionLifecycleContract {

    @Override
    protected SessionStore newStore(StoreSettings settings) {
        return new InMemorySessionStore(settings);
    }
}
