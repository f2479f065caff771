package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The server's packages stand on floors (docs/architecture.md, "Floor plan"): a package uses only packages on
 * floors below its own, so no import runs up and no two packages need each other. A class that packages on
 * several floors need belongs on the ground floor, in {@code protocol}, not where it was first used.
 */
class FloorPlanTest {
    private static final String ROOT = "(root)";
    /** From the ground up. */
    private static final List<Set<String>> FLOORS = List.of(
            Set.of("protocol", "diagnostics", "config"),
            Set.of("topic", "registry"),
            Set.of("store"),
            Set.of("security"),
            Set.of("delivery", "push"),
            Set.of("http"),
            Set.of("publish"),
            Set.of("cluster"),
            Set.of("node"),
            Set.of("metrics"),
            Set.of(ROOT));
    private static final Path SOURCES = Path.of("src/main/java/eu/arrowhead/eventhandler");
    private static final Pattern COMMENT = Pattern.compile("/\\*.*?\\*/|//[^\\n]*", Pattern.DOTALL);
    private static final Pattern REFERENCE = Pattern.compile("\\beu\\.arrowhead\\.eventhandler\\.(?:([a-z]\\w*)\\.)?[A-Z]");

    @Test
    void everyPackageStandsOnAFloor() throws IOException {
        Set<String> unplanned = new TreeSet<>(uses().keySet());
        FLOORS.forEach(unplanned::removeAll);
        assertEquals(Set.of(), unplanned, "packages on no floor: give each its place in FLOORS and the doc's plan");
    }

    @Test
    void noImportRunsUpOrSideways() throws IOException {
        Map<String, Integer> floorOf = new HashMap<>();
        for (int floor = 0; floor < FLOORS.size(); floor++) {
            for (String name : FLOORS.get(floor)) {
                floorOf.put(name, floor);
            }
        }
        List<String> climbs = new ArrayList<>();
        uses().forEach((from, uses) -> uses.forEach(use -> {
            Integer fromFloor = floorOf.get(from);
            Integer useFloor = floorOf.get(use.target);
            if (fromFloor != null && useFloor != null && useFloor >= fromFloor) {
                climbs.add(use.file + " (" + from + ", floor " + fromFloor + ") uses " + use.target + " (floor "
                        + useFloor + ")");
            }
        }));
        assertTrue(climbs.isEmpty(), "imports that do not run down the floor plan:\n" + String.join("\n", climbs));
    }

    /** Which of the server's packages each package names, file by file; comments do not count. */
    private static Map<String, List<Use>> uses() throws IOException {
        assertTrue(Files.isDirectory(SOURCES), "run from the module's directory: " + SOURCES.toAbsolutePath());
        Set<String> packages = new TreeSet<>();
        packages.add(ROOT);
        try (Stream<Path> dirs = Files.list(SOURCES)) {
            dirs.filter(Files::isDirectory).forEach(dir -> packages.add(dir.getFileName().toString()));
        }
        Map<String, List<Use>> uses = new HashMap<>();
        List<Path> files;
        try (Stream<Path> walk = Files.walk(SOURCES)) {
            files = walk.filter(path -> path.toString().endsWith(".java")).toList();
        }
        for (Path file : files) {
            Path relative = SOURCES.relativize(file);
            String from = relative.getNameCount() == 1 ? ROOT : relative.getName(0).toString();
            List<Use> own = uses.computeIfAbsent(from, name -> new ArrayList<>());
            String code = COMMENT.matcher(Files.readString(file)).replaceAll(" ");
            Matcher reference = REFERENCE.matcher(code);
            while (reference.find()) {
                String target = reference.group(1) == null ? ROOT : reference.group(1);
                // Other modules share the name space (the API's records): only this module's packages count.
                if (!target.equals(from) && packages.contains(target)) {
                    own.add(new Use(relative.toString(), target));
                }
            }
        }
        return uses;
    }

    private record Use(String file, String target) {
    }
}
