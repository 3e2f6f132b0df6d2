package io.handoff.gateway.deploy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;

import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.handoff.gateway.control.StopConfig;
import io.handoff.gateway.orchestration.OrchestrationConfig;
import io.smallrye.config.WithDefault;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * What a deployment of the gateway must get right, checked on the objects an API server answered back. Each check
 * returns the problems it found, worded for the person who has to fix the manifest; none found is an empty list.
 */
final class ManifestChecks {

    /** What the manifests must agree with, taken from the gateway's own sources and from the running gateway. */
    record Expected(String gateway, int httpPort, int grpcPort, String image, String workingDir, Predicate<String> served) {
    }

    /** The only access discovery needs: list and watch EndpointSlices and pods, as its informers do (fleet/). */
    static final Set<String> DISCOVERY_ACCESS = Set.of(
            "discovery.k8s.io/endpointslices list", "discovery.k8s.io/endpointslices watch",
            "/pods list", "/pods watch");

    private final Cluster cluster;
    private final Expected expected;

    ManifestChecks(Cluster cluster, Expected expected) {
        this.cluster = cluster;
        this.expected = expected;
    }

    List<String> all() {
        List<String> problems = new ArrayList<>();
        problems.addAll(replicas());
        problems.addAll(image());
        problems.addAll(ports());
        problems.addAll(probes());
        problems.addAll(resources());
        problems.addAll(stopFits());
        problems.addAll(unprivileged());
        problems.addAll(references());
        problems.addAll(readableVolumes());
        problems.addAll(configuration());
        problems.addAll(redis());
        problems.addAll(discoveryAccess());
        return problems;
    }

    Deployment gateway() {
        return cluster.deployment(expected.gateway())
                .orElseThrow(() -> new AssertionError("no Deployment " + expected.gateway()));
    }

    Container gatewayContainer() {
        return gateway().getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    /** Stateless replicas share sessions through Redis: more than one, so that a replica's loss loses nothing. */
    List<String> replicas() {
        Integer replicas = gateway().getSpec().getReplicas();
        return replicas != null && replicas >= 2 ? List.of()
                : List.of("the gateway runs " + replicas + " replica(s); several share the sessions");
    }

    /** The image README and the Dockerfile name, in any registry. */
    List<String> image() {
        String image = gatewayContainer().getImage();
        String withoutRegistry = image.substring(Math.max(0, nthLastIndexOf(image, '/', 2) + 1));
        return withoutRegistry.equals(expected.image()) ? List.of()
                : List.of("the gateway's image is " + image + ", not " + expected.image() + " (README, Dockerfile)");
    }

    /** The container listens where the gateway does, HTTP and gRPC; the Services reach both ports and no other. */
    List<String> ports() {
        List<String> problems = new ArrayList<>();
        Container container = gatewayContainer();
        Map<Integer, String> listeners = Map.of(expected.httpPort(), "quarkus.http.port", expected.grpcPort(),
                "quarkus.grpc.server.port");
        listeners.forEach((listener, key) -> {
            if (container.getPorts().stream().noneMatch(p -> listener.equals(p.getContainerPort()))) {
                problems.add("no container port " + listener + " (" + key + "): " + container.getPorts());
            }
        });
        List<Service> services = servicesOf(gateway());
        if (services.isEmpty()) {
            problems.add("no Service selects the gateway's pods");
        }
        Set<Integer> reached = new HashSet<>();
        for (Service service : services) {
            for (ServicePort port : service.getSpec().getPorts()) {
                Optional<Integer> target = containerPort(container, port.getTargetPort());
                if (target.isEmpty() || !listeners.containsKey(target.get())) {
                    problems.add("Service " + service.getMetadata().getName() + " port " + port.getName()
                            + " targets " + text(port.getTargetPort()) + ", not a port the gateway listens on "
                            + listeners.keySet());
                } else {
                    reached.add(target.get());
                }
            }
        }
        if (!services.isEmpty() && !reached.equals(listeners.keySet())) {
            problems.add("the Services reach the gateway's ports " + reached + ", not all of " + listeners.keySet());
        }
        return problems;
    }

    /** Liveness and readiness ask the gateway, on its port, at paths it answers. */
    List<String> probes() {
        List<String> problems = new ArrayList<>();
        Container container = gatewayContainer();
        if (container.getLivenessProbe() == null) {
            problems.add("no liveness probe");
        }
        if (container.getReadinessProbe() == null) {
            problems.add("no readiness probe");
        }
        for (Probe probe : probes(container)) {
            if (probe.getHttpGet() == null) {
                problems.add("a probe that asks no HTTP path: " + probe);
                continue;
            }
            String path = probe.getHttpGet().getPath();
            if (!expected.served().test(path)) {
                problems.add("probe path " + path + " is not served by the gateway");
            }
            Optional<Integer> port = containerPort(container, probe.getHttpGet().getPort());
            if (port.isEmpty() || port.get() != expected.httpPort()) {
                problems.add("probe " + path + " asks port " + text(probe.getHttpGet().getPort()) + ", not "
                        + expected.httpPort());
            }
        }
        return problems;
    }

    /** Every container states what it needs and what it may take, so that the scheduler and the JVM agree. */
    List<String> resources() {
        List<String> problems = new ArrayList<>();
        for (Deployment deployment : cluster.deployments()) {
            for (Container c : deployment.getSpec().getTemplate().getSpec().getContainers()) {
                for (String resource : List.of("cpu", "memory")) {
                    if (c.getResources() == null || c.getResources().getRequests() == null
                            || !c.getResources().getRequests().containsKey(resource)) {
                        problems.add(name(deployment) + "/" + c.getName() + " requests no " + resource);
                    }
                    if (c.getResources() == null || c.getResources().getLimits() == null
                            || !c.getResources().getLimits().containsKey(resource)) {
                        problems.add(name(deployment) + "/" + c.getName() + " has no " + resource + " limit");
                    }
                }
            }
        }
        return problems;
    }

    /** Kubernetes' own default between SIGTERM and SIGKILL, when a pod names none. */
    static final long KUBERNETES_DEFAULT_GRACE_SECONDS = 30;

    /**
     * A replica stopped by Kubernetes lets its running requests finish for {@code handoff.stop.grace-period}, then
     * aborts what is left for up to {@code handoff.orchestration.abort-timeout} (the gateway's defaults, or the
     * Deployment's environment): the pod's {@code terminationGracePeriodSeconds} must leave room for both, or
     * Kubernetes kills it mid-stop.
     */
    List<String> stopFits() {
        Deployment deployment = gateway();
        Long grace = deployment.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
        long podSeconds = grace == null ? KUBERNETES_DEFAULT_GRACE_SECONDS : grace;
        Duration stop = setting(gatewayContainer(), "HANDOFF_STOP_GRACE_PERIOD", StopConfig.class, "gracePeriod")
                .plus(setting(gatewayContainer(), "HANDOFF_ORCHESTRATION_ABORT_TIMEOUT", OrchestrationConfig.class,
                        "abortTimeout"));
        return stop.toSeconds() < podSeconds ? List.of()
                : List.of(name(deployment) + " gives a stopping pod " + podSeconds + " s (terminationGracePeriodSeconds)"
                        + " but a replica stops in up to " + stop.toSeconds() + " s (handoff.stop.grace-period plus"
                        + " handoff.orchestration.abort-timeout)");
    }

    /** A duration the container's environment sets, else the configuration mapping's default. */
    private static Duration setting(Container container, String variable, Class<?> mapping, String method) {
        String value = env(container, variable).map(EnvVar::getValue).orElseGet(() -> {
            try {
                return mapping.getMethod(method).getAnnotation(WithDefault.class).value();
            } catch (NoSuchMethodException e) {
                throw new IllegalStateException(e);
            }
        });
        return value.chars().allMatch(Character::isDigit) ? Duration.ofSeconds(Long.parseLong(value))
                : Duration.parse("PT" + value.toUpperCase(Locale.ROOT));
    }

    /** No container of any Deployment may run as root. */
    List<String> unprivileged() {
        List<String> problems = new ArrayList<>();
        for (Deployment deployment : cluster.deployments()) {
            PodSpec pod = deployment.getSpec().getTemplate().getSpec();
            PodSecurityContext podContext = pod.getSecurityContext();
            for (Container c : pod.getContainers()) {
                SecurityContext own = c.getSecurityContext();
                Boolean nonRoot = own != null && own.getRunAsNonRoot() != null ? own.getRunAsNonRoot()
                        : podContext == null ? null : podContext.getRunAsNonRoot();
                Long user = own != null && own.getRunAsUser() != null ? own.getRunAsUser()
                        : podContext == null ? null : podContext.getRunAsUser();
                if (!Boolean.TRUE.equals(nonRoot) || user == null || user == 0) {
                    problems.add(name(deployment) + "/" + c.getName() + " may run as root (runAsNonRoot "
                            + nonRoot + ", runAsUser " + user + ")");
                }
            }
        }
        return problems;
    }

    /** Every Secret, ConfigMap and key the Deployments name exists under deploy/. */
    List<String> references() {
        List<String> problems = new ArrayList<>();
        for (Deployment deployment : cluster.deployments()) {
            PodSpec pod = deployment.getSpec().getTemplate().getSpec();
            for (Container c : pod.getContainers()) {
                for (EnvVar env : c.getEnv()) {
                    if (env.getValueFrom() == null) {
                        continue;
                    }
                    var secretKey = env.getValueFrom().getSecretKeyRef();
                    if (secretKey != null && cluster.secretValue(secretKey.getName(), secretKey.getKey()).isEmpty()) {
                        problems.add("env " + env.getName() + " of " + name(deployment) + " refers to key "
                                + secretKey.getKey() + " of Secret " + secretKey.getName() + ", which has none");
                    }
                    var configKey = env.getValueFrom().getConfigMapKeyRef();
                    if (configKey != null
                            && cluster.configMapValue(configKey.getName(), configKey.getKey()).isEmpty()) {
                        problems.add("env " + env.getName() + " of " + name(deployment) + " refers to key "
                                + configKey.getKey() + " of ConfigMap " + configKey.getName() + ", which has none");
                    }
                }
                for (EnvFromSource from : c.getEnvFrom()) {
                    if (from.getSecretRef() != null && cluster.secret(from.getSecretRef().getName()).isEmpty()) {
                        problems.add(name(deployment) + " takes env from a Secret that is not there: "
                                + from.getSecretRef().getName());
                    }
                    if (from.getConfigMapRef() != null
                            && cluster.configMap(from.getConfigMapRef().getName()).isEmpty()) {
                        problems.add(name(deployment) + " takes env from a ConfigMap that is not there: "
                                + from.getConfigMapRef().getName());
                    }
                }
                for (VolumeMount mount : c.getVolumeMounts()) {
                    if (pod.getVolumes().stream().noneMatch(v -> v.getName().equals(mount.getName()))) {
                        problems.add(name(deployment) + " mounts volume " + mount.getName() + ", which it lacks");
                    }
                }
            }
            for (Volume volume : pod.getVolumes()) {
                if (volume.getSecret() != null) {
                    Optional<Map<String, String>> values = cluster.secret(volume.getSecret().getSecretName())
                            .map(Cluster::values);
                    problems.addAll(volumeItems(deployment, volume, "Secret", volume.getSecret().getSecretName(),
                            values, volume.getSecret().getItems()));
                }
                if (volume.getConfigMap() != null) {
                    Optional<Map<String, String>> values = cluster.configMap(volume.getConfigMap().getName())
                            .map(Cluster::values);
                    problems.addAll(volumeItems(deployment, volume, "ConfigMap", volume.getConfigMap().getName(),
                            values, volume.getConfigMap().getItems()));
                }
            }
            String account = pod.getServiceAccountName();
            if (account != null && cluster.serviceAccounts().stream()
                    .noneMatch(a -> a.getMetadata().getName().equals(account))) {
                problems.add(name(deployment) + " runs as ServiceAccount " + account + ", which is not there");
            }
        }
        return problems;
    }

    /**
     * The files of Secret and ConfigMap volumes belong to root (group fsGroup when the pod sets one): the container's
     * unprivileged user must be able to read them through the group or others' bits, or the gateway starts without its
     * routes or keys.
     */
    List<String> readableVolumes() {
        List<String> problems = new ArrayList<>();
        for (Deployment deployment : cluster.deployments()) {
            PodSpec pod = deployment.getSpec().getTemplate().getSpec();
            PodSecurityContext context = pod.getSecurityContext();
            Long fsGroup = context == null ? null : context.getFsGroup();
            Long runAsGroup = context == null ? null : context.getRunAsGroup();
            long fileGroup = fsGroup == null ? 0 : fsGroup;
            boolean inFileGroup = fsGroup != null || Long.valueOf(fileGroup).equals(runAsGroup);
            for (Volume volume : pod.getVolumes()) {
                List<Integer> modes = new ArrayList<>();
                if (volume.getSecret() != null) {
                    modes.add(volume.getSecret().getDefaultMode() == null ? 0644 : volume.getSecret().getDefaultMode());
                    volume.getSecret().getItems().stream().map(KeyToPath::getMode).filter(Objects::nonNull)
                            .forEach(modes::add);
                }
                if (volume.getConfigMap() != null) {
                    modes.add(volume.getConfigMap().getDefaultMode() == null ? 0644
                            : volume.getConfigMap().getDefaultMode());
                    volume.getConfigMap().getItems().stream().map(KeyToPath::getMode).filter(Objects::nonNull)
                            .forEach(modes::add);
                }
                for (int mode : modes) {
                    boolean readable = (mode & 04) != 0 || (inFileGroup && (mode & 040) != 0);
                    if (!readable) {
                        problems.add(name(deployment) + " volume " + volume.getName() + " has files of mode 0"
                                + Integer.toOctalString(mode) + ", which its user (not root, group " + runAsGroup
                                + ") cannot read");
                    }
                }
            }
        }
        return problems;
    }

    /**
     * The gateway keeps sessions in Redis, at the Secret's URL; its routes come from a mounted ConfigMap's
     * application.properties, where Quarkus reads one beside the application (config/ under the working directory),
     * and the gateway watches that file for changes ({@code HANDOFF_ROUTES_FILE}), so it holds routes only.
     */
    List<String> configuration() {
        List<String> problems = new ArrayList<>();
        Container container = gatewayContainer();
        Optional<EnvVar> kind = env(container, "HANDOFF_STORE_KIND");
        if (kind.isEmpty() || !"redis".equals(kind.get().getValue())) {
            problems.add("HANDOFF_STORE_KIND is not redis: " + kind);
        }
        Optional<EnvVar> url = env(container, "HANDOFF_REDIS_URL");
        if (url.isEmpty() || url.get().getValueFrom() == null || url.get().getValueFrom().getSecretKeyRef() == null) {
            problems.add("HANDOFF_REDIS_URL is not taken from a Secret: " + url);
        }
        Optional<String> routes = mountedFromConfigMap(gateway(),
                expected.workingDir() + "/config/application.properties");
        if (routes.isEmpty()) {
            problems.add("no ConfigMap is mounted as " + expected.workingDir() + "/config/application.properties");
        } else if (properties(routes.get()).stringPropertyNames().stream()
                .noneMatch(k -> k.startsWith("handoff.routes."))) {
            problems.add("the mounted application.properties configures no route (handoff.routes.<name>.*)");
        } else {
            // the watch reloads the file as a whole, and a reload takes routes only
            properties(routes.get()).stringPropertyNames().stream().filter(k -> !k.startsWith("handoff.routes."))
                    .forEach(k -> problems.add("the mounted routes file has " + k + ", which a reload refuses"));
        }
        String watched = expected.workingDir() + "/config/application.properties";
        Optional<EnvVar> file = env(container, "HANDOFF_ROUTES_FILE");
        if (file.isEmpty() || !watched.equals(file.get().getValue())) {
            problems.add("HANDOFF_ROUTES_FILE is not the mounted routes file " + watched + ": " + file);
        }
        return problems;
    }

    /** The Secret's Redis URL names the quick-start Redis's Service and port, and that Service reaches Redis. */
    List<String> redis() {
        List<String> problems = new ArrayList<>();
        Optional<EnvVar> url = env(gatewayContainer(), "HANDOFF_REDIS_URL");
        var ref = url.map(EnvVar::getValueFrom).map(v -> v.getSecretKeyRef());
        if (ref.isEmpty()) {
            return List.of("HANDOFF_REDIS_URL names no Secret key");
        }
        Optional<String> value = cluster.secretValue(ref.get().getName(), ref.get().getKey());
        if (value.isEmpty()) {
            return List.of("the Secret " + ref.get().getName() + " has no " + ref.get().getKey());
        }
        URI uri = URI.create(value.get());
        Optional<Service> service = cluster.services().stream()
                .filter(s -> s.getMetadata().getName().equals(uri.getHost())).findFirst();
        if (service.isEmpty()) {
            return List.of("the Redis URL names host " + uri.getHost() + ", which no Service under deploy/ is");
        }
        int port = uri.getPort() < 0 ? 6379 : uri.getPort();
        Optional<ServicePort> servicePort = service.get().getSpec().getPorts().stream()
                .filter(p -> p.getPort() == port).findFirst();
        List<Deployment> backing = cluster.deployments().stream()
                .filter(d -> selects(service.get(), d)).toList();
        if (servicePort.isEmpty()) {
            problems.add("Service " + uri.getHost() + " has no port " + port);
        } else if (backing.isEmpty()) {
            problems.add("Service " + uri.getHost() + " selects no Deployment's pods");
        } else {
            for (Deployment d : backing) {
                Container redis = d.getSpec().getTemplate().getSpec().getContainers().get(0);
                if (containerPort(redis, servicePort.get().getTargetPort()).isEmpty()) {
                    problems.add("Service " + uri.getHost() + " targets " + text(servicePort.get().getTargetPort())
                            + ", which " + name(d) + " does not listen on");
                }
            }
        }
        return problems;
    }

    /**
     * The gateway's ServiceAccount may list and watch EndpointSlices and pods in its namespace, and nothing else:
     * no other verb, resource, resource name restriction, or cluster-wide grant.
     */
    List<String> discoveryAccess() {
        List<String> problems = new ArrayList<>();
        String account = gateway().getSpec().getTemplate().getSpec().getServiceAccountName();
        if (account == null) {
            return List.of("the gateway runs as the namespace's default ServiceAccount");
        }
        Set<String> granted = new TreeSet<>();
        for (RoleBinding binding : cluster.roleBindings()) {
            if (binding.getSubjects().stream().noneMatch(s -> isAccount(s, account))) {
                continue;
            }
            if (!binding.getRoleRef().getKind().equals("Role")) {
                problems.add("RoleBinding " + name(binding) + " grants a " + binding.getRoleRef().getKind());
                continue;
            }
            var role = cluster.role(binding.getRoleRef().getName());
            if (role.isEmpty()) {
                problems.add("RoleBinding " + name(binding) + " binds Role " + binding.getRoleRef().getName()
                        + ", which is not there");
                continue;
            }
            for (PolicyRule rule : role.get().getRules()) {
                if (!rule.getResourceNames().isEmpty() || !rule.getNonResourceURLs().isEmpty()) {
                    problems.add("Role " + name(role.get()) + " restricts to names or grants URLs: " + rule);
                }
                for (String group : rule.getApiGroups()) {
                    for (String resource : rule.getResources()) {
                        for (String verb : rule.getVerbs()) {
                            granted.add(group + "/" + resource + " " + verb);
                        }
                    }
                }
            }
        }
        if (!granted.equals(new TreeSet<>(DISCOVERY_ACCESS))) {
            problems.add("ServiceAccount " + account + " is granted " + granted + ", not exactly "
                    + new TreeSet<>(DISCOVERY_ACCESS));
        }
        if (cluster.clusterRoleBindings().stream()
                .anyMatch(b -> b.getSubjects().stream().anyMatch(s -> isAccount(s, account)))) {
            problems.add("ServiceAccount " + account + " has a ClusterRoleBinding; discovery reads its namespace");
        }
        return problems;
    }

    // ---- reading the model

    static List<Probe> probes(Container container) {
        List<Probe> probes = new ArrayList<>();
        for (Probe p : new Probe[] {container.getLivenessProbe(), container.getReadinessProbe(),
                container.getStartupProbe()}) {
            if (p != null) {
                probes.add(p);
            }
        }
        return probes;
    }

    /** A port given by number or by the name of one of the container's ports, as the port number. */
    static Optional<Integer> containerPort(Container container, IntOrString port) {
        if (port == null) {
            return Optional.empty();
        }
        if (port.getIntVal() != null) {
            return Optional.of(port.getIntVal());
        }
        return container.getPorts().stream().filter(p -> port.getStrVal().equals(p.getName()))
                .map(ContainerPort::getContainerPort).findFirst();
    }

    /** A port as a manifest writes it: its number or its name. */
    static String text(IntOrString port) {
        return port == null ? "none" : port.getIntVal() != null ? port.getIntVal().toString() : port.getStrVal();
    }

    static Optional<EnvVar> env(Container container, String name) {
        return container.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst();
    }

    /** The content of the file at {@code path} in the container, when a ConfigMap's volume puts one there. */
    Optional<String> mountedFromConfigMap(Deployment deployment, String path) {
        PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        for (VolumeMount mount : pod.getContainers().get(0).getVolumeMounts()) {
            String dir = mount.getMountPath().endsWith("/") ? mount.getMountPath() : mount.getMountPath() + "/";
            if (!path.startsWith(dir)) {
                continue;
            }
            String file = path.substring(dir.length());
            Optional<Volume> volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName()))
                    .findFirst();
            if (volume.isEmpty()) {
                continue;
            }
            Optional<String> content = cluster.volumeFiles(volume.get()).entrySet().stream()
                    .filter(e -> e.getKey().equals(file)).map(Map.Entry::getValue).findFirst();
            if (content.isPresent() && volume.get().getConfigMap() != null) {
                return content;
            }
        }
        return Optional.empty();
    }

    private List<String> volumeItems(Deployment deployment, Volume volume, String kind, String name,
            Optional<Map<String, String>> values, List<KeyToPath> items) {
        if (values.isEmpty()) {
            return List.of(name(deployment) + " volume " + volume.getName() + " needs " + kind + " " + name
                    + ", which is not there");
        }
        List<String> problems = new ArrayList<>();
        for (KeyToPath item : items == null ? List.<KeyToPath>of() : items) {
            if (!values.get().containsKey(item.getKey())) {
                problems.add(name(deployment) + " volume " + volume.getName() + " needs key " + item.getKey()
                        + " of " + kind + " " + name + ", which has none");
            }
        }
        return problems;
    }

    private List<Service> servicesOf(Deployment deployment) {
        return cluster.services().stream().filter(s -> selects(s, deployment)).toList();
    }

    private static boolean selects(Service service, Deployment deployment) {
        Map<String, String> selector = service.getSpec().getSelector();
        Map<String, String> labels = deployment.getSpec().getTemplate().getMetadata().getLabels();
        return selector != null && !selector.isEmpty() && labels != null
                && selector.entrySet().stream().allMatch(e -> Objects.equals(labels.get(e.getKey()), e.getValue()));
    }

    private static boolean isAccount(Subject subject, String account) {
        return subject.getKind().equals("ServiceAccount") && subject.getName().equals(account);
    }

    private static String name(HasMetadata object) {
        return object.getKind() + " " + object.getMetadata().getName();
    }

    static Properties properties(String text) {
        Properties properties = new Properties();
        try {
            properties.load(new StringReader(text));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return properties;
    }

    private static int nthLastIndexOf(String s, char c, int n) {
        int at = s.length();
        for (int i = 0; i < n; i++) {
            at = s.lastIndexOf(c, at - 1);
            if (at < 0) {
                return -1;
            }
        }
        return at;
    }
}
