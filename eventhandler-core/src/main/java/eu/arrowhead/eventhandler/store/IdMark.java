package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import java.io.IOException;
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
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The highest id the server may have given out, kept in a file of its own ({@code store.id-mark-file}) rather than
 * in the database, so that nothing the database loses can take it back: a power cut that loses its newest commits,
 * a restore from an older backup, an emptied or damaged file. The writer reserves ids a block at a time and forces
 * the mark to disk before any id of the block is given; the next start continues above the mark, so no id is
 * ever given twice. A clean stop lowers the mark to the last id, so that a restart skips nothing.
 *
 * <p>Written as a new file forced to disk and renamed over the old one (then the directory forced), so that a
 * crash leaves either mark whole. Thread-safe: appends ask it under the writer's lock, the writer thread writes it.
 */
final class IdMark {
    /** The smallest block of ids reserved at once: at 10 000 events/s, two forced writes a second. */
    static final int MIN_BLOCK = 10_000;

    /** After a failed reservation, the next try waits at least this long. */
    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final Logger LOG = LoggerFactory.getLogger(IdMark.class);

    private final Path file;
    private final long block;
    /** Guarded by this object, as are the fields below: the highest id on disk. */
    private long reservedUpTo;
    private boolean wanted;
    private boolean failing;
    private long failedNanos;

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
        mark(file, lastId + block);
        return new IdMark(file, block, lastId + block);
    }

    /** Whether {@code lastId} may be given now: the mark on disk covers it. */
    synchronized boolean covers(long lastId) {
        return lastId <= reservedUpTo;
    }

    /**
     * Whether the writer should reserve the next block, fewer than half of this one being left after
     * {@code lastGiven}; asked by every append, true once until the writer has tried. After a failed try, only
     * a second later, so that a disk that refuses the mark is not asked at every publish.
     */
    synchronized boolean wantsBlock(long lastGiven) {
        if (wanted || reservedUpTo - lastGiven >= block / 2
                || failing && System.nanoTime() - failedNanos < RETRY_NANOS) {
            return false;
        }
        wanted = true;
        return true;
    }

    /** Whether an append asked for the next block and the writer has not yet tried. */
    synchronized boolean wanted() {
        return wanted;
    }

    /**
     * On the writer thread: reserves the next block after {@code lastGiven} if the last one runs low, forced to
     * disk outside this object's lock (appends ask {@link #covers} meanwhile and are not held up). A failure is
     * said once, its end once; until then appends past the reservation are refused.
     */
    void reserveIfLow(long lastGiven) {
        long upTo;
        synchronized (this) {
            wanted = false;
            if (reservedUpTo - lastGiven >= block / 2) {
                return;
            }
            upTo = lastGiven + block;
        }
        try {
            write(upTo);
        } catch (IOException e) {
            synchronized (this) {
                if (!failing) {
                    LOG.warn("cannot record the id mark in {} ({}): publishes past id {} get 503 until it can",
                            file.toAbsolutePath(), e.getMessage(), reservedUpTo);
                }
                failing = true;
                failedNanos = System.nanoTime();
            }
            return;
        }
        synchronized (this) {
            if (failing) {
                LOG.info("the id mark is recorded again (ids up to {})", upTo);
            }
            failing = false;
            reservedUpTo = upTo;
        }
    }

    /** At a clean stop: no id above {@code lastId} was given. */
    synchronized void lowerTo(long lastId) throws IOException {
        write(lastId);
        reservedUpTo = lastId;
    }

    private void write(long upTo) throws IOException {
        mark(file, upTo);
    }

    private static void mark(Path file, long upTo) throws IOException {
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
