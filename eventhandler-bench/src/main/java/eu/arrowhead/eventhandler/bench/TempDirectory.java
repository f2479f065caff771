package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** A new, empty directory, removed with all it holds when closed: a database that starts empty and leaves nothing. */
final class TempDirectory implements AutoCloseable {
    private final Path path;

    private TempDirectory(Path path) {
        this.path = path;
    }

    static TempDirectory create(String prefix) {
        try {
            return new TempDirectory(Files.createTempDirectory(prefix));
        } catch (IOException e) {
            throw new BenchException("cannot create a temporary directory: " + e, e);
        }
    }

    Path path() {
        return path;
    }

    @Override
    public void close() {
        try (Stream<Path> tree = Files.walk(path)) {
            // Deepest first, so that each directory is empty when its turn comes.
            tree.sorted(Comparator.reverseOrder()).forEach(TempDirectory::delete);
        } catch (IOException | UncheckedIOException e) {
            throw new BenchException("cannot remove " + path + ": " + e, e);
        }
    }

    private static void delete(Path file) {
        try {
            Files.delete(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
