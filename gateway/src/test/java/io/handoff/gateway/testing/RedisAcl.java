package io.handoff.gateway.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * The Redis ACL user Handoff needs, exactly as docs/reliability.md gives it to operators: the tests create the
 * store's user from that line, so the documented line is the one proven to be enough (and, by the refusals the
 * tests check, no more than that).
 */
public final class RedisAcl {

    /** The user name of the documented line. */
    public static final String USER = "handoff";

    /** The placeholders of the documented line: the password, and the key pattern of the default key prefix. */
    static final String PASSWORD_RULE = ">CHANGE-ME";
    static final String KEY_RULE = "~handoff:*";

    private static final String DOCUMENT = "docs/reliability.md";
    private static final String LINE_START = "ACL SETUSER " + USER + " ";

    private RedisAcl() {
    }

    /** The documented line as written, e.g. to show it in a failure message. */
    public static String documentedLine() {
        return DocumentedKeys.read(DOCUMENT).lines().map(String::trim).filter(line -> line.startsWith(LINE_START))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException(DOCUMENT + " gives no line starting " + LINE_START));
    }

    /**
     * The documented {@code ACL SETUSER} command, its placeholders filled: {@code password}, and {@code keyGlob}
     * in place of the default prefix {@code handoff} (a test's prefixes differ per test, so it allows them all).
     */
    public static List<String> setUser(String password, String keyGlob) {
        List<String> command = new ArrayList<>();
        boolean passwordSeen = false;
        boolean keysSeen = false;
        for (String token : documentedLine().split("\\s+")) {
            if (token.equals(PASSWORD_RULE)) {
                command.add(">" + password);
                passwordSeen = true;
            } else if (token.equals(KEY_RULE)) {
                command.add("~" + keyGlob + ":*");
                keysSeen = true;
            } else {
                command.add(token);
            }
        }
        if (!passwordSeen || !keysSeen) {
            throw new IllegalStateException("the documented ACL line must hold " + PASSWORD_RULE + " and " + KEY_RULE
                    + ": " + documentedLine());
        }
        return command;
    }

    /** Creates the documented user on {@code server}, as its administrator. */
    public static void createUser(RedisServer server, String password, String keyGlob) {
        String answer = server.reply(setUser(password, keyGlob).toArray(String[]::new));
        if (!"OK".equals(answer)) {
            throw new IllegalStateException("the documented ACL line was refused: " + answer);
        }
    }

    /** {@code redis://handoff:<password>@host:port}: how a client names the user (Quarkus reads the same form). */
    public static String urlAs(String password, String url) {
        return url.replaceFirst("://", "://" + USER + ":" + password + "@");
    }
}
