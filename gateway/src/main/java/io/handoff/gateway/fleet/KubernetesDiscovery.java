package io.handoff.gateway.fleet;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.handoff.gateway.control.FleetSampler;
import io.handoff.gateway.routing.PoolMembership;
import io.handoff.gateway.routing.RoutingConfig;
import io.handoff.gateway.routing.RoutingConfig.KubernetesEndpoints;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Watches the EndpointSlices or pods the routes' pools ask for ({@code
 * handoff.routes.<name>.prefill-discovery.kubernetes.*} and {@code decode-discovery}) with one informer per source,
 * namespace and selector, and hands each change to the pools that asked; {@link WatchUp} says whether each watch
 * is up. With no pool asking, no client is made and no cluster is contacted.
 *
 * <p>The start does not wait for the cluster: the routes serve their configured endpoints at once, and discovered
 * ones join as the informer lists them. An API server that cannot be reached is logged and retried by the informer,
 * at start as later; meanwhile the pools keep what they have.
 */
@Startup
@ApplicationScoped
public class KubernetesDiscovery {

    private static final Logger LOG = Logger.getLogger(KubernetesDiscovery.class);

    /** How often an informer replays its whole cache: a missed change is made good at the latest then. */
    private static final long RESYNC_MILLIS = 60_000;

    private final RoutingConfig routing;
    private final KubernetesConfig kubernetes;
    private final PoolMembership membership;
    private final FleetSampler sampler;
    private final MeterRegistry metrics;
    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
    private KubernetesClient client;

    public KubernetesDiscovery(RoutingConfig routing, KubernetesConfig kubernetes, PoolMembership membership,
            FleetSampler sampler, MeterRegistry metrics) {
        this.routing = routing;
        this.kubernetes = kubernetes;
        this.membership = membership;
        this.sampler = sampler;
        this.metrics = metrics;
    }

    @PostConstruct
    void start() {
        List<DiscoveredPool> pools = new ArrayList<>();
        routing.routes().forEach((route, c) -> {
            c.prefillDiscovery().kubernetes().ifPresent(k -> pools.add(pool(route, "prefill", k)));
            c.decodeDiscovery().kubernetes().ifPresent(k -> pools.add(pool(route, "decode", k)));
        });
        if (pools.isEmpty()) {
            return;
        }
        client = new KubernetesClientBuilder().withConfig(clientConfig()).build();
        String ownNamespace = Optional.ofNullable(client.getNamespace()).orElse("default");
        Map<DiscoveryWatch, List<DiscoveredPool>> byWatch = new LinkedHashMap<>();
        for (DiscoveredPool p : pools) {
            DiscoveryWatch watch = new DiscoveryWatch(p.source(), p.settings().namespace().orElse(ownNamespace),
                    p.settings().labelSelector());
            byWatch.computeIfAbsent(watch, w -> new ArrayList<>()).add(p);
        }
        byWatch.forEach(this::watch);
    }

    private DiscoveredPool pool(String route, String pool, KubernetesEndpoints settings) {
        membership.route(route); // a route that did not negotiate has stopped the start before this
        return new DiscoveredPool(route, pool, settings, membership, sampler, metrics);
    }

    private Config clientConfig() {
        ConfigBuilder config = new ConfigBuilder(Config.autoConfigure(null));
        kubernetes.apiServerUrl().ifPresent(config::withMasterUrl);
        return config.build();
    }

    private void watch(DiscoveryWatch watch, List<DiscoveredPool> pools) {
        switch (watch.source()) {
            case ENDPOINT_SLICES -> watch(watch, pools, client.discovery().v1().endpointSlices()
                    .inNamespace(watch.namespace()).withLabelSelector(watch.labelSelector())
                    .runnableInformer(RESYNC_MILLIS), SliceEndpoints::ready);
            case PODS -> watch(watch, pools, client.pods().inNamespace(watch.namespace())
                    .withLabelSelector(watch.labelSelector()).runnableInformer(RESYNC_MILLIS), PodEndpoints::ready);
        }
    }

    /** What the objects of a watch offer a pool now, by endpoint name: {@link SliceEndpoints}, {@link PodEndpoints}. */
    private interface Offered<T> {
        Map<String, URI> ready(List<T> objects, KubernetesEndpoints pool);
    }

    private <T extends HasMetadata> void watch(DiscoveryWatch watch, List<DiscoveredPool> pools,
            SharedIndexInformer<T> informer, Offered<T> offered) {
        ResourceEventHandler<T> changed = new ResourceEventHandler<>() {
            @Override
            public void onAdd(T object) {
                offer(informer, pools, offered);
            }

            @Override
            public void onUpdate(T before, T after) {
                offer(informer, pools, offered);
            }

            @Override
            public void onDelete(T object, boolean finalStateUnknown) {
                offer(informer, pools, offered);
            }

            @Override
            public void onNothing() {
                // an empty first list: pools asked to hold nothing from here, which is what they hold
            }
        };
        informer.addEventHandler(changed);
        // retried at start too (the default gives up when the first list fails): the routes serve meanwhile
        informer.exceptionHandler((started, failure) -> {
            LOG.warnf("%s: %s; retrying", watch, failure.getMessage());
            return true;
        });
        pools.forEach(p -> WatchUp.register(metrics, informer, p.route(), p.pool(), watch.source()));
        informers.add(informer);
        informer.start().whenComplete((ok, failure) -> {
            if (failure == null) {
                LOG.infof("%s: watched for %d pool(s)", watch, pools.size());
            } else {
                LOG.errorf(failure, "%s: the informer did not start", watch);
            }
        });
    }

    /** Every pool of the watch is told what the whole cache offers now, not what the one event changed. */
    private static <T> void offer(SharedIndexInformer<T> informer, List<DiscoveredPool> pools, Offered<T> offered) {
        List<T> objects = informer.getStore().list();
        for (DiscoveredPool pool : pools) {
            try {
                pool.offer(offered.ready(objects, pool.settings()));
            } catch (RuntimeException e) {
                LOG.errorf(e, "applying what Kubernetes offers to route %s's %s pool failed", pool.route(),
                        pool.pool());
            }
        }
    }

    @PreDestroy
    void stop() {
        informers.forEach(SharedIndexInformer::stop);
        if (client != null) {
            client.close();
        }
    }
}
