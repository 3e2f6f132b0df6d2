package io.handoff.gateway.session;

import io.handoff.gateway.session.store.InMemoryRateLimitStore;
import io.handoff.gateway.session.store.RateLimitStore;

class InMemoryRateLimitStoreTest extends RateLimitStoreContract {

    @Override
    protected RateLimitStore newStore() {
        return new InMemoryRateLimitStore();
    }
}
