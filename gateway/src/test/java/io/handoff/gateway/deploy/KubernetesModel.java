package io.handoff.gateway.deploy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Manifests read through fabric8's typed Kubernetes API model. The model keeps what it does not know (a misspelt
 * field, a field at the wrong level) aside as "additional properties" instead of failing, so every object is walked
 * and any such field is reported: a manifest the API server would reject or silently ignore does not pass.
 */
final class KubernetesModel {

    private static final String MODEL_PACKAGE = "io.fabric8.kubernetes.api.model";

    private KubernetesModel() {
    }

    static List<HasMetadata> load(KubernetesClient client, Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return client.load(in).items();
        }
    }

    /** What keeps an object from being one of the API's: an unknown kind, unknown fields (by their path). */
    static List<String> problems(HasMetadata object) {
        List<String> problems = new ArrayList<>();
        String name = object.getKind() + " " + object.getMetadata().getName();
        if (object instanceof GenericKubernetesResource) {
            problems.add(name + ": " + object.getApiVersion() + " " + object.getKind() + " is no kind of the API");
            return problems;
        }
        unknownFields(object, name, problems);
        return problems;
    }

    private static void unknownFields(Object node, String path, List<String> problems) {
        if (node == null) {
            return;
        }
        if (node instanceof Collection<?> items) {
            int i = 0;
            for (Object item : items) {
                unknownFields(item, path + "[" + i++ + "]", problems);
            }
            return;
        }
        if (node instanceof Map<?, ?> map) {
            map.forEach((k, v) -> unknownFields(v, path + "[" + k + "]", problems));
            return;
        }
        if (!node.getClass().getPackageName().startsWith(MODEL_PACKAGE)) {
            return;
        }
        for (Method getter : node.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())
                    || !getter.getName().startsWith("get") || getter.getName().equals("getClass")) {
                continue;
            }
            if (getter.getName().equals("getAdditionalProperties")) {
                if (invoke(getter, node) instanceof Map<?, ?> unknown && !unknown.isEmpty()) {
                    problems.add(path + ": fields the API does not have: " + unknown.keySet());
                }
                continue;
            }
            // only the model's own fields: a computed getter (a Quantity's numerical amount) is not walked
            Class<?> type = getter.getReturnType();
            if (Collection.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type)
                    || type.getPackageName().startsWith(MODEL_PACKAGE)) {
                String field = Character.toLowerCase(getter.getName().charAt(3)) + getter.getName().substring(4);
                unknownFields(invoke(getter, node), path + "." + field, problems);
            }
        }
    }

    private static Object invoke(Method getter, Object node) {
        try {
            return getter.invoke(node);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException(getter + " of " + node.getClass(), e);
        }
    }
}
