package io.handoff.gateway.fleet;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.handoff.gateway.routing.KubernetesSource;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * {@code handoff_discovery_watch_up{route,pool,source}}: 1 while the informer feeding a pool watches, 0 while it
 * does not: before its first list succeeds, while it re-lists and re-watches after a failure (an API server out of
 * reach, access refused: it keeps retrying, and keeps reading 0), and once stopped. Meanwhile the pool keeps what it
 * has, so a watch that stays down is an alert: the pool no longer follows its engines.
 */
final class WatchUp {

    static final String METRIC = "handoff.discovery.watch.up";

    private WatchUp() {
    }

    static void register(MeterRegistry metrics, SharedIndexInformer<?> informer, String route, String pool,
            KubernetesSource source) {
        Gauge.builder(METRIC, informer, i -> i.isWatching() ? 1 : 0)
                .tags("route", route, "pool", pool, "source", source.label())
                .description("1 while the Kubernetes watch feeding the pool is up, 0 while it fails or has stopped")
                .strongReference(true).register(metrics);
    }
}
