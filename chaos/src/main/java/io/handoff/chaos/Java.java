package io.handoff.chaos;

import java.nio.file.Path;

/** The java binary the driver itself runs on: every child JVM uses the same one. */
final class Java {
    private Java() {
    }

    static String binary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
