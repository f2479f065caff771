package eu.arrowhead.eventhandler.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Keeps the README's code examples honest: an example lives in a test, between {@code // README:begin NAME}
 * and {@code // README:end NAME}, where it is compiled and run, and the README must show exactly those lines.
 */
public final class ReadmeSnippet {
    private ReadmeSnippet() {
    }

    /**
     * Fails unless the README of the repository contains the named region of {@code testSource}, with the
     * region's common indentation removed.
     *
     * @param testSource the test's source file, relative to the module directory the tests run in
     */
    public static void assertInReadme(Path testSource, String name) throws IOException {
        List<String> lines = Files.readAllLines(testSource, StandardCharsets.UTF_8);
        int begin = indexOf(lines, "// README:begin " + name, testSource);
        int end = indexOf(lines, "// README:end " + name, testSource);
        List<String> region = lines.subList(begin + 1, end);
        int indent = region.stream().filter(line -> !line.isBlank())
                .mapToInt(line -> line.length() - line.stripLeading().length()).min().orElse(0);
        StringBuilder snippet = new StringBuilder();
        for (String line : region) {
            snippet.append(line.isBlank() ? "" : line.substring(indent)).append('\n');
        }
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        if (!readme.contains(snippet)) {
            throw new AssertionError("README.md does not show the example '" + name + "' of " + testSource
                    + " as it is in the test; it should read:\n" + snippet);
        }
    }

    private static int indexOf(List<String> lines, String marker, Path source) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).trim().equals(marker)) {
                return i;
            }
        }
        throw new AssertionError(source + " has no line '" + marker + "'");
    }
}
