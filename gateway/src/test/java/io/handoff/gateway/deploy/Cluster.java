package io.handoff.gateway.deploy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.KubernetesClient;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The objects of one namespace as an API server answers them back, read through the typed model: what the checks and
 * the pod's simulation look at.
 */
record Cluster(List<Deployment> deployments, List<Service> services, List<Secret> secrets, List<ConfigMap> configMaps,
        List<ServiceAccount> serviceAccounts, List<Role> roles, List<RoleBinding> roleBindings,
        List<ClusterRole> clusterRoles, List<ClusterRoleBinding> clusterRoleBindings) {

    static Cluster readFrom(KubernetesClient client, String namespace) {
        return new Cluster(client.apps().deployments().inNamespace(namespace).list().getItems(),
                client.services().inNamespace(namespace).list().getItems(),
                client.secrets().inNamespace(namespace).list().getItems(),
                client.configMaps().inNamespace(namespace).list().getItems(),
                client.serviceAccounts().inNamespace(namespace).list().getItems(),
                client.rbac().roles().inNamespace(namespace).list().getItems(),
                client.rbac().roleBindings().inNamespace(namespace).list().getItems(),
                client.rbac().clusterRoles().list().getItems(),
                client.rbac().clusterRoleBindings().list().getItems());
    }

    Optional<Deployment> deployment(String name) {
        return named(deployments, name);
    }

    Optional<Secret> secret(String name) {
        return named(secrets, name);
    }

    Optional<ConfigMap> configMap(String name) {
        return named(configMaps, name);
    }

    Optional<Role> role(String name) {
        return named(roles, name);
    }

    /** A Secret's values, from {@code data} (base64) and {@code stringData} alike. */
    static Map<String, String> values(Secret secret) {
        Map<String, String> values = new HashMap<>();
        if (secret.getData() != null) {
            secret.getData().forEach((k, v) -> values.put(k,
                    new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8)));
        }
        if (secret.getStringData() != null) {
            values.putAll(secret.getStringData());
        }
        return values;
    }

    static Map<String, String> values(ConfigMap configMap) {
        return configMap.getData() == null ? Map.of() : configMap.getData();
    }

    Optional<String> secretValue(String name, String key) {
        return secret(name).map(Cluster::values).map(v -> v.get(key));
    }

    Optional<String> configMapValue(String name, String key) {
        return configMap(name).map(Cluster::values).map(v -> v.get(key));
    }

    /** The files a Secret's or ConfigMap's volume holds, by their path in the volume. */
    Map<String, String> volumeFiles(Volume volume) {
        Map<String, String> values;
        List<KeyToPath> items;
        if (volume.getSecret() != null) {
            values = secret(volume.getSecret().getSecretName()).map(Cluster::values).orElse(Map.of());
            items = volume.getSecret().getItems();
        } else if (volume.getConfigMap() != null) {
            values = configMap(volume.getConfigMap().getName()).map(Cluster::values).orElse(Map.of());
            items = volume.getConfigMap().getItems();
        } else {
            return Map.of();
        }
        if (items == null || items.isEmpty()) {
            return values;
        }
        Map<String, String> files = new HashMap<>();
        for (KeyToPath item : items) {
            if (values.containsKey(item.getKey())) {
                files.put(item.getPath(), values.get(item.getKey()));
            }
        }
        return files;
    }

    private static <T extends HasMetadata> Optional<T> named(List<T> objects, String name) {
        return objects.stream().filter(o -> o.getMetadata().getName().equals(name)).findFirst();
    }
}
