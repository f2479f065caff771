package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.diagnostics.NamedThreads;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The highest id the server may have given out, kept in a file of its own ({@code store.id-mark-file}) rather than
 * in the database, so that nothing the database loses can take it back: a power cut that loses its newest commits,
 * a restore from an older backup, an emptied or damaged file. Ids are reserved a block at a time, and the mark is
 * forced to disk before any id of the block is given; the next start continues above the mark, so no id is
 * ever given twice. A clean stop lowers the mark to the last id, so that a restart skips nothing.
 *
 * <p>Written as a new file forced to disk and renamed over the old one (then the directory forced), so that a
 * crash leaves either mark whole. Thread-safe: appends ask it under the writer's lock; a thread of its own
 * ({@code eh-store-ids}) writes it.
 */
final class IdMark {
    /** The smallest block of ids reserved at once: at 10 000 events/s, two forced writes a second. */
    static final int MIN_BLOCK = 10_000;

    private static final int CLOSE_SECONDS = 5;
    /** After a failed reservation, the next try waits at least this long. */
    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final Logger LOG = LoggerFactory.getLogger(IdMark.class);

    private final Path file;
    private final long block;
    /** Guarded by this object, as are the fields below: the highest id on disk. */
    private long reservedUpTo;
    private boolean requested;
    private boolean closed;
    private boolean failing;
    private long failedNanos;
    /** Held while the file is written: a reservation and the stop's lowering never write it at once. */
    private final Object files = new Object();
    private final ExecutorService reserver = Executors.newSingleThreadExecutor(NamedThreads.daemons("eh-store-ids"));

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
        // One mark per database, so that two servers started in one directory do not share one.
        String database = url.replaceFirst("^jdbc:", "").replaceAll("[^A-Za-z0-9.]+", "-").replaceAll("^-|-$", "");
        return Path.of("data", "eventhandler-" + database + ".ids");
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

    /**
     * Called by every append, under the writer's lock, so it never blocks: whether ids up to {@code upTo} may be
     * given now, because the mark on disk covers them. When it does not, or fewer than half a block would be left
     * after them, the next block is reserved on the mark's own thread, never behind the database's I/O (a probe
     * or a stuck write can take seconds while publishes go on). One request at a time; after a failed try, the
     * next a second later, so that a disk that refuses the mark is not asked at every publish.
     *
     * @param upTo the last id the append asking needs
     */
    synchronized boolean allows(long upTo) {
        boolean covered = upTo <= reservedUpTo;
        boolean low = reservedUpTo - upTo < block / 2;
        if (low && !requested && !closed && !(failing && System.nanoTime() - failedNanos < RETRY_NANOS)) {
            requested = true;
            // A block covers any one append: store.buffer-events bounds a batch.
            long next = upTo + block;
            reserver.execute(() -> reserve(next));
        }
        return covered;
    }

    /** On the mark's thread: writes the new mark, forced, outside this object's lock (appends ask {@link #allows}). */
    private void reserve(long upTo) {
        try {
            synchronized (files) {
                if (isClosed()) {
                    return;
                }
                write(upTo);
            }
        } catch (IOException e) {
            synchronized (this) {
                requested = false;
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
            requested = false;
            if (failing) {
                LOG.info("the id mark is recorded again (ids up to {})", upTo);
            }
            failing = false;
            reservedUpTo = Math.max(reservedUpTo, upTo);
        }
    }

    private synchronized boolean isClosed() {
        return closed;
    }

    /**
     * At a clean stop: no id above {@code lastId} was given, and none will be. No reservation runs after this one
     * (one in progress is waited for), so the mark cannot be raised again behind it.
     */
    void lowerTo(long lastId) throws IOException {
        close();
        synchronized (files) {
            write(lastId);
        }
        synchronized (this) {
            reservedUpTo = lastId;
        }
    }

    /** Stops reserving; a reservation in progress is waited for, up to a few seconds (a forced write of a few bytes). */
    void close() {
        synchronized (this) {
            closed = true;
        }
        reserver.shutdown();
        try {
            if (!reserver.awaitTermination(CLOSE_SECONDS, TimeUnit.SECONDS)) {
                LOG.warn("the id mark's last reservation did not end within {} s", CLOSE_SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
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
