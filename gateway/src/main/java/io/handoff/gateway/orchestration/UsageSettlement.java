package io.handoff.gateway.orchestration;

import io.handoff.gateway.session.TenantRateLimits;
import io.handoff.gateway.session.TenantRateLimits.Charge;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.Usage;
import io.smallrye.mutiny.Multi;

/**
 * Settles what the rate limits charged one Generate once its stream ends: refused before acceptance, the charge goes
 * back; ended with a usage reported, the tokens charged are corrected to prompt plus completion tokens; ended with
 * none (cancelled before the engines said), the charge stands.
 */
final class UsageSettlement {

    private final TenantRateLimits limits;
    private final Charge charge;
    private volatile Usage usage;

    UsageSettlement(TenantRateLimits limits, Charge charge) {
        this.limits = limits;
        this.charge = charge;
    }

    Multi<GenerateResponse> around(Multi<GenerateResponse> stream) {
        return stream
                .onItem().invoke(event -> {
                    if (event.hasUsage()) {
                        usage = event.getUsage();
                    }
                })
                .onTermination().invoke((failure, cancelled) -> {
                    if (failure instanceof GenerateRefusal) {
                        limits.giveBack(charge);
                    } else if (usage != null) {
                        limits.settle(charge, (long) usage.getPromptTokens() + usage.getCompletionTokens());
                    }
                });
    }
}
