package io.handoff.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One OS process of the harness, its output in a log file of its own. It is stopped the ways a machine stops a
 * process: SIGKILL, SIGSTOP and SIGCONT (by pid, through {@code kill}), never by name.
 */
final class ChildProcess {

    /** Every child still alive: killed when the driver exits, so an aborted run leaves nothing behind. */
    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly),
                "chaos-children-reaper"));
    }

    private final String name;
    private final Process process;
    private final Path log;

    private ChildProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    static ChildProcess start(String name, List<String> command, Path log) {
        return start(name, command, Map.of(), log);
    }

    /** As {@link #start(String, List, Path)}, with {@code environment} added to the driver's own. */
    static ChildProcess start(String name, List<String> command, Map<String, String> environment, Path log) {
        try {
            Files.createDirectories(log.getParent());
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            builder.environment().putAll(environment);
            Process p = builder.start();
            RUNNING.add(p);
            return new ChildProcess(name, p, log);
        } catch (IOException e) {
            throw new IllegalStateException(name + ": cannot start " + command.get(0), e);
        }
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    boolean alive() {
        return process.isAlive();
    }

    Path log() {
        return log;
    }

    /**
     * Waits until the log has a line matching {@code pattern} written after {@code fromOffset} and answers its first
     * group. Fails when the process exits first or the time runs out, quoting the end of the log.
     */
    String awaitLine(Pattern pattern, long fromOffset, Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        while (true) {
            String text = read(fromOffset);
            Matcher m = pattern.matcher(text);
            if (m.find()) {
                return m.groupCount() > 0 ? m.group(1) : m.group();
            }
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited (" + process.exitValue() + ") before '" + pattern
                        + "':\n" + tail(text));
            }
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException(name + " did not log '" + pattern + "' within " + timeout + ":\n"
                        + tail(text));
            }
            Sleep.millis(50);
        }
    }

    long logSize() {
        try {
            return Files.exists(log) ? Files.size(log) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    private String read(long fromOffset) {
        try {
            byte[] all = Files.readAllBytes(log);
            int from = (int) Math.min(fromOffset, all.length);
            return new String(all, from, all.length - from, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static String tail(String text) {
        return text.length() <= 3000 ? text : text.substring(text.length() - 3000);
    }

    /** kill -9: the process gets no chance to do anything more. */
    void kill9() {
        process.destroyForcibly();
        awaitExit();
    }

    /** A polite stop (SIGTERM), at the end of the run. */
    void stop() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        awaitExit();
    }

    /** SIGTERM, and nothing more: the process stops as it sees fit (see {@link #awaitExit(long)}). */
    void terminate() {
        signal("TERM");
    }

    /** Waits up to {@code millis} for the process to exit; answers whether it did. */
    boolean awaitExit(long millis) {
        try {
            if (process.waitFor(millis, TimeUnit.MILLISECONDS)) {
                RUNNING.remove(process);
                return true;
            }
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    void pause() {
        signal("STOP");
    }

    void resume() {
        signal("CONT");
    }

    private void signal(String signal) {
        try {
            // the shell's own kill: no procps needed on a slim machine
            Process kill = new ProcessBuilder("sh", "-c", "kill -" + signal + " " + process.pid())
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            kill.waitFor();
        } catch (IOException e) {
            throw new IllegalStateException("kill -" + signal + " " + process.pid(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void awaitExit() {
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        RUNNING.remove(process);
    }
}
