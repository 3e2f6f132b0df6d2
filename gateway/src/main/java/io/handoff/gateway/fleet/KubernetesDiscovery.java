package io.handoff.gateway.fleet;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.handoff.gateway.control.FleetSampler;
import io.handoff.gateway.routing.PoolMembership;
import io.handoff.gateway.routing.RoutingConfig;
import io.handoff.gateway.routing.RoutingConfig.KubernetesSlices;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Watches the EndpointSlices the routes' pools ask for ({@code handoff.routes.<name>.prefill-discovery.kubernetes.*}
 * and {@code decode-discovery}) with one informer per namespace and selector, and hands each change to the pools
 * that asked. With no pool asking, no client is made and no cluster is contacted.
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
    private final List<SharedIndexInformer<EndpointSlice>> informers = new ArrayList<>();
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
        Map<SliceWatch, List<DiscoveredPool>> byWatch = new LinkedHashMap<>();
        for (DiscoveredPool p : pools) {
            SliceWatch watch = new SliceWatch(p.slices().namespace().orElse(ownNamespace),
                    p.slices().labelSelector());
            byWatch.computeIfAbsent(watch, w -> new ArrayList<>()).add(p);
        }
        byWatch.forEach(this::watch);
    }

    private DiscoveredPool pool(String route, String pool, KubernetesSlices slices) {
        membership.route(route); // a route that did not negotiate has stopped the start before this
        return new DiscoveredPool(route, pool, slices, membership, sampler, metrics);
    }

    private Config clientConfig() {
        ConfigBuilder config = new ConfigBuilder(Config.autoConfigure(null));
        kubernetes.apiServerUrl().ifPresent(config::withMasterUrl);
        return config.build();
    }

    private void watch(SliceWatch watch, List<DiscoveredPool> pools) {
        SharedIndexInformer<EndpointSlice> informer = client.discovery().v1().endpointSlices()
                .inNamespace(watch.namespace()).withLabelSelector(watch.labelSelector())
                .runnableInformer(RESYNC_MILLIS);
        ResourceEventHandler<EndpointSlice> changed = new ResourceEventHandler<>() {
            @Override
            public void onAdd(EndpointSlice slice) {
                offer(informer, pools);
            }

            @Override
            public void onUpdate(EndpointSlice before, EndpointSlice after) {
                offer(informer, pools);
            }

            @Override
            public void onDelete(EndpointSlice slice, boolean finalStateUnknown) {
                offer(informer, pools);
            }

            @Override
            public void onNothing() {
                // an empty first list: pools asked to hold nothing from here, which is what they hold
            }
        };
        informer.addEventHandler(changed);
        // retried at start too (the default gives up when the first list fails): the routes serve meanwhile
        informer.exceptionHandler((started, failure) -> {
            LOG.warnf("EndpointSlices %s: %s; retrying", watch, failure.getMessage());
            return true;
        });
        informers.add(informer);
        informer.start().whenComplete((ok, failure) -> {
            if (failure == null) {
                LOG.infof("EndpointSlices %s: watched for %d pool(s)", watch, pools.size());
            } else {
                LOG.errorf(failure, "EndpointSlices %s: the informer did not start", watch);
            }
        });
    }

    /** Every pool of the watch is told what the whole cache offers now, not what the one event changed. */
    private static void offer(SharedIndexInformer<EndpointSlice> informer, List<DiscoveredPool> pools) {
        List<EndpointSlice> slices = informer.getStore().list();
        for (DiscoveredPool pool : pools) {
            try {
                pool.offer(SliceEndpoints.ready(slices, pool.slices()));
            } catch (RuntimeException e) {
                LOG.errorf(e, "applying EndpointSlices to a pool failed");
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
