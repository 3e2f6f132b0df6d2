package io.handoff.gateway.deploy;

import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric names a PromQL expression (or a Grafana query over one) reads. Not a full parser: it removes what cannot
 * be a metric name (strings, label matchers, ranges, grouping label lists, Grafana's variables) and keeps every
 * identifier that is neither a function, an aggregation, a keyword nor a number.
 */
final class PromQl {

    private static final Pattern STRING = Pattern.compile("\"(?:\\\\.|[^\"\\\\])*\"|'(?:\\\\.|[^'\\\\])*'");
    /** Grafana's {@code label_values(metric, label)}: the label is no metric. */
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\((.*),\\s*\\w+\\s*\\)");
    private static final Pattern GRAFANA_VARIABLE = Pattern.compile("\\$\\{[^}]*}|\\$\\w+");
    private static final Pattern LABEL_MATCHERS = Pattern.compile("\\{[^}]*}");
    private static final Pattern RANGE = Pattern.compile("\\[[^\\]]*]");
    private static final Pattern GROUPING = Pattern.compile(
            "\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "by", "without", "on",
            "ignoring", "group_left", "group_right", "inf", "nan", "Inf", "NaN", "atan2");

    private PromQl() {
    }

    static Set<String> metricNames(String expression) {
        String rest = STRING.matcher(expression).replaceAll(" ");
        rest = LABEL_VALUES.matcher(rest).replaceAll("($1)");
        rest = GRAFANA_VARIABLE.matcher(rest).replaceAll(" ");
        rest = LABEL_MATCHERS.matcher(rest).replaceAll(" ");
        rest = RANGE.matcher(rest).replaceAll(" ");
        rest = GROUPING.matcher(rest).replaceAll(" ");
        Set<String> names = new TreeSet<>();
        Matcher m = IDENTIFIER.matcher(rest);
        while (m.find()) {
            String word = m.group();
            boolean partOfNumber = m.start() > 0 && Character.isDigit(rest.charAt(m.start() - 1));
            boolean called = rest.substring(m.end()).stripLeading().startsWith("(");
            if (!partOfNumber && !called && !KEYWORDS.contains(word)) {
                names.add(word);
            }
        }
        return names;
    }
}
