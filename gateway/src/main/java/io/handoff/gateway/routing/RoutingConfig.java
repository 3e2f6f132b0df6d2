package io.handoff.gateway.routing;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * {@code handoff.routes.<name>.*} and {@code handoff.demo.*}: the engine fleet this gateway fronts. Every key is
 * documented in docs/api.md ("Routes").
 */
@ConfigMapping(prefix = "handoff")
public interface RoutingConfig {

    /** Routes by name; none configured means the embedded demo fleet, when {@link Demo#enabled()}. */
    Map<String, RouteConfig> routes();

    Demo demo();

    /**
     * A file of routes, a properties text of {@code handoff.routes.<name>.*} keys, read while the gateway runs: a
     * change is reloaded as {@code POST /admin/routes/reload} reloads ({@link RoutesFileWatch}).
     */
    Optional<String> routesFile();

    /** How often {@link #routesFile()} is read, on the gateway's clock. */
    @WithDefault("5s")
    Duration routesFilePoll();

    /**
     * How long a retired endpoint is kept, at least, after the last leg on it ended, before it is let go. Never less
     * than the time an obligation on it can stay owed: its route's engine hold, then the reaper's whole schedule of
     * discharge attempts ({@link RetiredEndpoints#keepFor}); a shorter value is raised to that.
     */
    @WithDefault("15m")
    Duration retiredEndpointKeep();

    interface Demo {
        /** Start in-process simulators and one route per family when no route is configured. */
        @WithDefault("true")
        boolean enabled();
    }

    interface RouteConfig {

        /** The model name clients send. */
        String model();

        /** Other names clients may send for the same model. */
        Optional<List<String>> aliases();

        /** The model name the engines serve, when it differs from {@link #model()}. */
        Optional<String> engineModel();

        /** The connector family: vllm, sglang, trtllm or openengine. */
        String family();

        /** Producer endpoints: {@code uri} or {@code name=uri}; may be unset when the pool is discovered. */
        Optional<List<String>> prefill();

        /** Consumer endpoints: {@code uri} or {@code name=uri}; may be unset when the pool is discovered. */
        Optional<List<String>> decode();

        /** Producer endpoints found while the gateway runs, besides {@link #prefill()}. */
        PoolDiscovery prefillDiscovery();

        /** Consumer endpoints found while the gateway runs, besides {@link #decode()}. */
        PoolDiscovery decodeDiscovery();

        /** The style a request gets when it names none. */
        @WithDefault(RouteSettings.DEFAULT_STYLE)
        String defaultStyle();

        /** Styles a request may name explicitly; the default style alone when unset. */
        Optional<List<String>> styles();

        Bypass bypass();

        /** Lease of the route's sessions; the deployment's default lease when unset. */
        Optional<Duration> leaseDefault();

        /** Longest lease; the shorter of the deployment's maximum and the engine's KV hold when unset. */
        Optional<Duration> leaseMax();

        /** Longest wait for a prefill leg to park its KV (or finish). */
        @WithDefault(RouteSettings.DEFAULT_PREFILL_TIMEOUT)
        Duration prefillTimeout();

        /** Longest silence on the decode stream, before its first event and between events. */
        @WithDefault(RouteSettings.DEFAULT_DECODE_IDLE_TIMEOUT)
        Duration decodeIdleTimeout();

        /** Decode endpoints tried for one request when an endpoint cannot be reached before attach. */
        @WithDefault(RouteSettings.DEFAULT_DECODE_ATTEMPTS)
        int decodeAttempts();

        /** Consecutive failures that open an endpoint's circuit breaker. */
        @WithDefault(RouteSettings.DEFAULT_BREAKER_FAILURES)
        int breakerFailures();

        /** How long an open breaker skips its endpoint before a probe may bring it back. */
        @WithDefault(RouteSettings.DEFAULT_BREAKER_OPEN_FOR)
        Duration breakerOpenFor();

        /** Requests one endpoint may have outstanding; a pool whose endpoints are all full is saturated. */
        @WithDefault(RouteSettings.DEFAULT_MAX_OUTSTANDING_PER_ENDPOINT)
        int maxOutstandingPerEndpoint();

        /** Requests the route runs at once (its bulkhead); beyond it a Generate waits in the queue or is refused. */
        @WithDefault(RouteSettings.DEFAULT_MAX_IN_FLIGHT)
        int maxInFlight();

        Queue queue();

        /** How the prefill pool chooses an endpoint: least-outstanding, power-of-two or prefix-affinity. */
        @WithDefault(EndpointPolicy.DEFAULT)
        String prefillPolicy();

        /** How the decode pool chooses an endpoint: least-outstanding or power-of-two. */
        @WithDefault(EndpointPolicy.DEFAULT)
        String decodePolicy();

        PrefixAffinity prefixAffinity();

        /** Family-specific connector options, documented in mappings/&lt;family&gt;.md. */
        Map<String, String> options();
    }

    interface Queue {
        /** Requests that may wait for a slot when the route is full; 0 refuses them at once as OVERLOADED. */
        @WithDefault(RouteSettings.DEFAULT_QUEUE_MAX_WAITING)
        int maxWaiting();

        /** Longest wait for a slot; then the request is refused as OVERLOADED. */
        @WithDefault(RouteSettings.DEFAULT_QUEUE_TIMEOUT)
        Duration timeout();
    }

    interface PrefixAffinity {
        /** Tokens per block of the prompt prefix that prefix-affinity hashes. */
        @WithDefault(RouteSettings.DEFAULT_PREFIX_BLOCK_TOKENS)
        int blockTokens();

        /** Blocks of the prompt that prefix-affinity hashes. */
        @WithDefault(RouteSettings.DEFAULT_PREFIX_BLOCKS)
        int blocks();

        /** The multiple of the pool's average outstanding requests above which an endpoint is passed over. */
        @WithDefault(RouteSettings.DEFAULT_PREFIX_LOAD_BOUND)
        double loadBound();
    }

    /** Where a pool's endpoints are found while the gateway runs; nowhere when nothing is set. */
    interface PoolDiscovery {

        /**
         * The ready endpoints of EndpointSlices, or the ready pods, of a namespace, chosen by label (the fleet room
         * watches them).
         */
        Optional<KubernetesEndpoints> kubernetes();

        /** Whether the pool takes endpoints from anywhere besides its configuration. */
        default boolean any() {
            return kubernetes().isPresent();
        }
    }

    interface KubernetesEndpoints {

        /**
         * What is watched: {@code endpoint-slices} (the slices of a Service) or {@code pods} (the pods themselves);
         * read through {@link KubernetesSource#of}, which refuses anything else.
         */
        @WithDefault(KubernetesSource.DEFAULT)
        String source();

        /** The namespace of the slices or pods; the gateway's own (as its client finds it) when unset. */
        Optional<String> namespace();

        /** Which slices or pods, e.g. {@code kubernetes.io/service-name=vllm-decode} or {@code app=vllm-decode}. */
        String labelSelector();

        /**
         * The port, by name (a slice port's, or a pod's container port's); the only port when neither this nor
         * {@link #port()} is set.
         */
        Optional<String> portName();

        /** The port, by number; wins over {@link #portName()}. */
        OptionalInt port();

        /** The scheme of the endpoints' URLs. */
        @WithDefault("http")
        String scheme();
    }

    interface Bypass {
        /**
         * When a request skips the prefill pool and prefills on a decode endpoint: {@code never}, {@code always},
         * or any of {@code explicit} (the request asks with transfer disposition BYPASS), {@code short-prompt}
         * and {@code prefill-unavailable} (every prefill endpoint is unhealthy or full).
         */
        @WithDefault("never")
        List<String> when();

        /** Prompts shorter than this many tokens bypass under {@code short-prompt}. */
        OptionalInt shortPromptTokens();

        /**
         * Turns the uncached-prompt trigger on: a request bypasses when the decode endpoint chosen for it would
         * prefill at most this many prompt tokens itself, by the gateway's estimate of that endpoint's prefix cache.
         */
        OptionalInt uncachedPromptTokens();

        /** The prompt tokens a decode endpoint is assumed to keep in its prefix cache, for that estimate. */
        @WithDefault(BypassPolicy.DEFAULT_DECODE_CACHE_TOKENS)
        int decodeCacheTokens();
    }
}
