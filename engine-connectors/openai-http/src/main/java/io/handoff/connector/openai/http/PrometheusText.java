package io.handoff.connector.openai.http;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Reads sample values from a Prometheus text exposition ({@code /metrics}). A metric with several label sets (one per
 * model or engine) is summed, which is what a load figure for the whole endpoint needs.
 */
public final class PrometheusText {

    private final Map<String, Double> sums;

    private PrometheusText(Map<String, Double> sums) {
        this.sums = sums;
    }

    public static PrometheusText parse(String text) {
        Map<String, Double> sums = new HashMap<>();
        for (String raw : text.split("\n")) {
            String line = raw.trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int nameEnd = 0;
            while (nameEnd < line.length() && line.charAt(nameEnd) != '{' && line.charAt(nameEnd) != ' ') {
                nameEnd++;
            }
            String name = line.substring(0, nameEnd);
            // the value follows the closing brace of the labels (label values may contain spaces)
            int valueStart = line.charAt(Math.min(nameEnd, line.length() - 1)) == '{'
                    ? line.indexOf('}', nameEnd) + 1 : nameEnd;
            String[] rest = line.substring(valueStart).trim().split("\\s+");
            if (rest.length == 0 || rest[0].isEmpty()) {
                continue;
            }
            try {
                sums.merge(name, Double.parseDouble(rest[0]), Double::sum);
            } catch (NumberFormatException ignored) {
                // a malformed sample says nothing about load; skip it
            }
        }
        return new PrometheusText(sums);
    }

    /** The sum of all samples of a metric, if the exposition had any. */
    public Optional<Double> sum(String metric) {
        return Optional.ofNullable(sums.get(metric));
    }

    /**
     * The sums of several metrics under names of the caller's ({@code running_requests} for an engine's own metric
     * name), for those the exposition had.
     */
    public Map<String, Double> sums(Map<String, String> metricsByName) {
        Map<String, Double> named = new HashMap<>();
        metricsByName.forEach((name, metric) -> sum(metric).ifPresent(v -> named.put(name, v)));
        return named;
    }
}
