package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.OptionalLong;

/**
 * The highest id the server may have given out, kept in a file of its own ({@code store.id-mark-file}) rather than
 * in the database, so that nothing the database loses can take it back: a power cut that loses its newest commits,
 * a restore from an older backup, an emptied or damaged file. The writer reserves ids a block at a time and forces
 * the mark to disk before any id of the block is given; the next start continues above the mark, so no id is
 * ever given twice. A clean stop lowers the mark to the last id, so that a restart skips nothing.
 *
 * <p>Written as a new file forced to disk and renamed over the old one (then the directory forced), so that a
 * crash leaves either mark whole. Only the writer thread and the start and stop use it.
 */
final class IdMark {
    /** The smallest block of ids reserved at once: at 10 000 events/s, two forced writes a second. */
    static final int MIN_BLOCK = 10_000;

    private final Path file;
    private final long block;
    private long reservedUpTo;

    private IdMark(Path file, long block, long reservedUpTo) {
        this.file = file;
        this.block = block;
        this.reservedUpTo = reservedUpTo;
    }

    /** The file {@code store.id-mark-file} names, or the default beside the database. */
    static Path fileOf(EventHandlerConfig config) {
        if (!config.storeIdMarkFile().isBlank()) {
            return Path.of(config.storeIdMarkFile());
        }
        String url = config.storeUrl();
        String embedded = "jdbc:h2:file:";
        if (url.startsWith(embedded)) {
            String path = url.substring(embedded.length());
            int options = path.indexOf(';');
            return Path.of((options < 0 ? path : path.substring(0, options)) + ".ids");
        }
        return Path.of("data", "eventhandler.ids");
    }

    /**
     * The mark a previous run left, if any.
     *
     * @throws IOException if the file exists but cannot be read or holds no id: the server does not guess
     */
    static OptionalLong read(Path file) throws IOException {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII).strip();
        } catch (NoSuchFileException e) {
            return OptionalLong.empty();
        }
        try {
            long mark = Long.parseLong(text);
            if (mark < 0) {
                throw new NumberFormatException();
            }
            return OptionalLong.of(mark);
        } catch (NumberFormatException e) {
            throw new IOException("the id mark file " + file.toAbsolutePath() + " holds no id ('" + text
                    + "'); if the event log's database is whole, delete the file and the server continues after the"
                    + " database's last id");
        }
    }

    /**
     * Reserves the first block above {@code lastId}, forced to disk, before the server gives any id.
     *
     * @param block ids reserved at a time; the mark is pushed on when fewer than half of them are left
     */
    static IdMark reserveAbove(Path file, long lastId, long block) throws IOException {
        IdMark mark = new IdMark(file, block, lastId);
        mark.write(lastId + block);
        return mark;
    }

    /** The highest id that may be given now. */
    long reservedUpTo() {
        return reservedUpTo;
    }

    /** Whether fewer than half a block of reserved ids are left after {@code lastGiven}. */
    boolean runningLow(long lastGiven) {
        return reservedUpTo - lastGiven < block / 2;
    }

    /** Reserves the next block after {@code lastGiven}. */
    void reserveAfter(long lastGiven) {
        try {
            write(lastGiven + block);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record the id mark in " + file.toAbsolutePath() + ": " + e.getMessage(), e);
        }
    }

    /** At a clean stop: no id above {@code lastId} was given. */
    void lowerTo(long lastId) throws IOException {
        write(lastId);
    }

    private void write(long upTo) throws IOException {
        Path directory = file.toAbsolutePath().getParent();
        Files.createDirectories(directory);
        Path next = directory.resolve(file.getFileName() + ".next");
        try (FileChannel channel = FileChannel.open(next, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            channel.write(ByteBuffer.wrap((upTo + "\n").getBytes(StandardCharsets.US_ASCII)));
            channel.force(true);
        }
        try {
            Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(next, file, StandardCopyOption.REPLACE_EXISTING);
        }
        forceDirectory(directory);
        reservedUpTo = upTo;
    }

    /** The rename itself is durable only once the directory is: on Linux a directory can be opened and forced. */
    private static void forceDirectory(Path directory) {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException e) {
            // Some platforms cannot open a directory; the rename is then as durable as they make it.
        }
    }
}
