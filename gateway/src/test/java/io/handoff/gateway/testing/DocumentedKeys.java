package io.handoff.gateway.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The configuration keys the documentation promises, read from its tables: README's "Configuration" table (full
 * keys) and docs/api.md's routes table (keys under {@code handoff.routes.<name>.}). A placeholder such as
 * {@code <name>} is a map key; the test that reads these decides what value to give each.
 */
public final class DocumentedKeys {

    /** The placeholder of the route name in documented keys. */
    public static final String ROUTE_PREFIX = "handoff.routes.<name>.";

    private static final Pattern CODE = Pattern.compile("`([^`]+)`");

    private DocumentedKeys() {
    }

    /** One documented key and its table's default cell, when that cell is one literal value. */
    public record Key(String name, Optional<String> literalDefault) {
    }

    /** Every key of README's configuration table, in order. */
    public static List<Key> readme() {
        return table(read("README.md"), "## Configuration", "");
    }

    /** Every key of docs/api.md's routes table, as full keys under {@link #ROUTE_PREFIX}. */
    public static List<Key> routes() {
        return table(read("docs/api.md"), "### Routes", ROUTE_PREFIX);
    }

    /** Every key of docs/reliability.md's table of the listener's limits ("The edge"), with its value. */
    public static List<Key> edgeLimits() {
        return table(read("docs/reliability.md"), "### Limits", "");
    }

    /** Reads a file of the repository, whichever module's directory the tests run in. */
    public static String read(String pathInRepository) {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve(pathInRepository);
            if (Files.exists(candidate) && Files.exists(dir.resolve("pom.xml")) && Files.exists(dir.resolve("mvnw"))) {
                try {
                    return Files.readString(candidate);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        throw new IllegalStateException("no " + pathInRepository + " above " + Path.of("").toAbsolutePath());
    }

    private static List<Key> table(String markdown, String heading, String prefix) {
        int start = markdown.indexOf("\n" + heading + "\n");
        if (start < 0) {
            throw new IllegalStateException("no section " + heading);
        }
        List<Key> keys = new ArrayList<>();
        boolean inTable = false;
        boolean pastHeader = false;
        for (String line : markdown.substring(start + heading.length() + 2).split("\n")) {
            if (line.startsWith("|")) {
                inTable = true;
                String[] cells = line.split("\\|", -1);
                if (cells[1].contains("---")) {
                    pastHeader = true;
                    continue;
                }
                if (!pastHeader || cells.length < 4) {
                    continue;
                }
                List<String> names = codes(cells[1]);
                List<String> defaults = codes(cells[2]);
                String defaultCell = cells[2].trim();
                boolean oneLiteral = names.size() == 1 && defaults.size() == 1
                        && defaultCell.equals("`" + defaults.get(0) + "`");
                for (String name : names) {
                    keys.add(new Key(prefix + name, oneLiteral ? Optional.of(defaults.get(0)) : Optional.empty()));
                }
            } else if (inTable) {
                break;
            }
        }
        if (keys.isEmpty()) {
            throw new IllegalStateException("no keys in the table of " + heading);
        }
        return keys;
    }

    private static List<String> codes(String cell) {
        List<String> out = new ArrayList<>();
        Matcher m = CODE.matcher(cell);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** The keys as a map of name to literal default, for lookups. */
    public static Map<String, Optional<String>> byName(List<Key> keys) {
        Map<String, Optional<String>> out = new LinkedHashMap<>();
        keys.forEach(k -> out.put(k.name(), k.literalDefault()));
        return out;
    }
}
