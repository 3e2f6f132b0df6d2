package io.handoff.gateway.routing;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;

import java.io.IOException;
import java.io.StringReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

/**
 * Routes written as the gateway reads them at start: a properties text of {@code handoff.routes.<name>.*} keys,
 * mapped by the same {@link RoutingConfig} with the same defaults and conversions, so that a reload cannot mean
 * anything the start would not. Nothing else may be in the text: a key outside {@code handoff.routes.} is refused by
 * name (only routes reload; everything else needs a restart), as is a key no route setting reads.
 */
public final class RoutesText {

    private static final String PREFIX = "handoff.routes.";

    /**
     * One route of the text and how its pools discover endpoints while serving.
     *
     * @param discovery by pool ({@code prefill}, {@code decode}), what the pool watches; absent: nothing
     */
    public record Parsed(RouteSettings settings, Map<String, String> discovery) {

        public Parsed {
            discovery = Map.copyOf(discovery);
        }

        /** The pools that take endpoints while serving, and so may start with none. */
        public Set<String> discovered() {
            return discovery.keySet();
        }
    }

    private RoutesText() {
    }

    /**
     * The routes of the text, in name order.
     *
     * @throws IllegalArgumentException naming the key or route and what is wrong; the text changes nothing
     */
    public static List<Parsed> parse(String text) {
        Properties properties = new Properties();
        try {
            properties.load(new StringReader(text == null ? "" : text));
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException("the routes are not a properties text: " + e.getMessage());
        }
        Map<String, String> keys = new HashMap<>();
        Set<String> foreign = new TreeSet<>();
        for (String key : properties.stringPropertyNames()) {
            if (key.startsWith(PREFIX) && key.length() > PREFIX.length()) {
                keys.put(key, properties.getProperty(key));
            } else {
                foreign.add(key);
            }
        }
        if (!foreign.isEmpty()) {
            throw new IllegalArgumentException("only handoff.routes.<name>.* keys can be reloaded (anything else "
                    + "needs a restart); the text also has " + String.join(", ", foreign));
        }
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("the text has no route (handoff.routes.<name>.*): a reload cannot "
                    + "leave the gateway with none");
        }
        RoutingConfig config;
        try {
            SmallRyeConfig read = new SmallRyeConfigBuilder()
                    .withSources(new PropertiesConfigSource(keys, "routes reload", 100))
                    .withConverter(Duration.class, 100, new DurationConverter())
                    .withMapping(RoutingConfig.class)
                    .withValidateUnknown(true)
                    .build();
            config = read.getConfigMapping(RoutingConfig.class);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("the routes do not read as configuration: " + reason(e));
        }
        List<Parsed> out = new ArrayList<>();
        new TreeSet<>(config.routes().keySet()).forEach(name -> {
            RoutingConfig.RouteConfig route = config.routes().get(name);
            out.add(new Parsed(RouteSettings.from(name, route), RouteRegistry.discoveryOf(name, route)));
        });
        return out;
    }

    /** SmallRye's message, which names every key it could not map, on one line. */
    private static String reason(RuntimeException e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        if (e instanceof NoSuchElementException) {
            return message;
        }
        return message.replace("Configuration validation failed:", "")
                .replace("java.lang.IllegalArgumentException: ", "")
                .replaceAll("\\s*\\n\\s*", "; ").replaceAll("^[;\\s]+", "").trim();
    }
}
