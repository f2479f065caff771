package eu.arrowhead.eventhandler.store;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.h2.engine.SessionLocal;
import org.h2.api.ErrorCode;
import org.h2.jdbc.JdbcConnection;
import org.h2.mvstore.DataUtils;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.MVStoreException;

/**
 * What the event store does to an embedded H2 database's file beyond SQL: how it is opened, kept compact, and
 * forced to disk. Nothing here applies to MySQL/MariaDB or to H2 reached over TCP.
 */
final class EmbeddedH2 {
    private static final String FILE_URL = "jdbc:h2:file:";
    /** A path that already names one of H2's file systems ({@code nio:}, {@code split:}, ...), not a drive letter. */
    private static final Pattern FILE_SYSTEM_PREFIX = Pattern.compile("^[A-Za-z][A-Za-z0-9]+:.*");
    private static final String OBJECT_CACHE = "h2.objectCache";

    private EmbeddedH2() {
    }

    /**
     * Turns off H2's cache of values shared by the whole JVM (system property {@code h2.objectCache}), unless the
     * command line sets it. H2 puts every string bound to a statement into a table of 1 024 strings of any length,
     * held by a soft reference: with the event JSON bound as a string, that is up to 1 024 events, some 60 MB at
     * 60 KB each, on no heap share. A soft reference in use is cleared only when the heap is all but exhausted, so
     * the collector worked ever harder first: at {@code -Xmx64m}, 60 KB publishes at 25/s took 82% of the time in
     * GC with the cache and 6% without it, and some publishes got 503 (issue 29). H2 reads the property once, when
     * it first needs it, so this runs before the event store opens its database.
     */
    static void keepValuesOutOfSharedCache() {
        if (System.getProperty(OBJECT_CACHE) == null) {
            System.setProperty(OBJECT_CACHE, "false");
        }
    }

    /**
     * How long H2 keeps a large value of a query's result after the query, unless the URL says otherwise. H2 keeps a
     * reference to each one (an event's JSON is a CLOB) for its {@code LOB_TIMEOUT}, five minutes by default, so
     * that a client may still read it: some 120 bytes each, and a read of the log materializes a chunk of rows at a
     * time. Under {@code LargePagesIT}'s read flood (8 loops of pages and 4 subscribers replaying 60 KB events) that
     * was 248 000 references after 100 s, 30 MB, and a {@code -Xmx64m} server ran out of heap. The store takes each
     * value as a string while it reads the row, so a few seconds are ample.
     */
    static final int LOB_TIMEOUT_MILLIS = 5_000;
    private static final Pattern SETS_LOB_TIMEOUT = Pattern.compile("(?i);\\s*LOB_TIMEOUT\\s*=");

    /**
     * The URL the store opens an H2 database with: {@link #interruptProof} and, unless the URL sets it, a
     * {@code LOB_TIMEOUT} of {@link #LOB_TIMEOUT_MILLIS}. Any other URL as it is.
     */
    static String storeUrl(String url) {
        if (!url.startsWith("jdbc:h2:")) {
            return url;
        }
        String proof = interruptProof(url);
        return SETS_LOB_TIMEOUT.matcher(proof).find() ? proof : proof + ";LOB_TIMEOUT=" + LOB_TIMEOUT_MILLIS;
    }

    /**
     * The URL with H2's file opened through {@code async:}, an {@link java.nio.channels.AsynchronousFileChannel}.
     * H2's default file channel is an interruptible one: an interrupt that reaches any thread while it is inside
     * H2's file I/O (a stop, a cancelled task, a library we do not own) closes the channel for every thread, and
     * the database stays broken until it is reopened; commits in flight were lost that way. An asynchronous
     * channel is not closed by an interrupt, and H2 finishes the read or write it waits for. Measured with 5 000
     * commits of 10 small rows (warm, this machine): 61.5 us per commit through {@code async:} against 63.2 us
     * through the default, the same within noise.
     *
     * <p>Only a {@code jdbc:h2:file:} URL whose path names no file system of its own is changed; the database
     * file is the same either way.
     */
    private static String interruptProof(String url) {
        if (!url.startsWith(FILE_URL)) {
            return url;
        }
        String path = url.substring(FILE_URL.length());
        if (FILE_SYSTEM_PREFIX.matcher(path).matches()) {
            return url;
        }
        return FILE_URL + "async:" + path;
    }

    /**
     * Makes the directory of an embedded H2 file database, or says in one sentence why it cannot be used, before
     * H2 tries: H2 that cannot write there fails to open its trace file too, and prints that failure's stack trace
     * to the standard error, some 40 lines for one cause (issue 29). Nothing is checked for any other URL.
     *
     * @throws SQLException naming the directory and what is wrong with it
     */
    static void prepareDirectory(String url) throws SQLException {
        Optional<Path> found = directoryOf(url);
        if (found.isEmpty()) {
            return;
        }
        Path directory = found.get();
        try {
            Files.createDirectories(directory);
        } catch (FileAlreadyExistsException e) {
            throw new SQLException(e.getFile() + " is a file, not a directory");
        } catch (FileSystemException e) {
            throw new SQLException("its directory " + directory + " cannot be made: "
                    + (e.getReason() == null ? e.getClass().getSimpleName() : e.getFile() + ": " + e.getReason()));
        } catch (IOException e) {
            throw new SQLException("its directory " + directory + " cannot be made: " + e.getMessage());
        }
        if (!Files.isWritable(directory)) {
            throw new SQLException("its directory " + directory + " is not writable by this user");
        }
    }

    /**
     * The directory an embedded H2 file database lives in, to ask its filesystem for room; empty for any other URL
     * or a path on one of H2's own file systems.
     */
    static Optional<Path> directoryOf(String url) {
        if (!url.startsWith(FILE_URL)) {
            return Optional.empty();
        }
        String path = url.substring(FILE_URL.length()).split(";", 2)[0];
        if (FILE_SYSTEM_PREFIX.matcher(path).matches()) {
            return Optional.empty();
        }
        if (path.startsWith("~")) {
            path = System.getProperty("user.home") + path.substring(1);
        }
        Path parent = Path.of(path).toAbsolutePath().normalize().getParent();
        return Optional.ofNullable(parent);
    }

    /**
     * Rewrites H2's store file so that it keeps few chunks. With {@code WRITE_DELAY 0} every commit writes a chunk
     * of its own, and H2 keeps an object per chunk on the heap (about 250 bytes with its map entry and bit set)
     * until housekeeping rewrites it, which its background thread did and no longer does: without this, a server
     * that commits 100 times a second gains some 90 MB of heap a day (the hour-long soak, docs/reliability.md).
     * Measured with a loop of 30 000 small commits: 30 009 chunks without it, about 400 with it every 1 000 commits.
     *
     * <p>{@code compactFile} sets the store's retention time to 0 and leaves it there, so that from the first
     * compaction on H2 may overwrite a dead chunk at once. A file left by a crash of the process then often opened
     * without its last commit, although that commit had been written and forced: H2's recovery settled on the
     * commit before. Measured by copying the file after each commit of one row and opening the copy: 278 of 300
     * copies lacked the last row with the retention time left at 0, none of 300 with it put back (H2's default,
     * 45 s). In sync mode that was an acknowledged event lost by a {@code kill -9}. The cost of putting it back: a
     * dead chunk's object stays on the heap until the next compaction (or 45 s), not only until the next commit.
     */
    static void compact(Connection connection, int maxMillis) throws SQLException {
        store(connection).ifPresent(store -> compact(store, maxMillis));
    }

    /**
     * {@link #compact} once {@code commits} have been made since the store's version {@code since}; returns the
     * version compacted at, or {@code since} while none is due (and for a database that is not H2). A compaction
     * that took all of {@code maxMillis} was likely cut short, so it returns {@code since} then: the next call
     * goes on with it.
     */
    static long compactIfDue(Connection connection, int maxMillis, long since, int commits) throws SQLException {
        Optional<MVStore> found = store(connection);
        if (found.isEmpty() || found.get().getCurrentVersion() - since < commits) {
            return since;
        }
        long version = found.get().getCurrentVersion();
        long started = System.nanoTime();
        compact(found.get(), maxMillis);
        return System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(maxMillis) ? version : since;
    }

    private static void compact(MVStore store, int maxMillis) {
        int retentionMillis = store.getRetentionTime();
        try {
            store.compactFile(maxMillis);
        } finally {
            store.setRetentionTime(retentionMillis);
        }
    }

    /**
     * Forces what H2 has written to the file onto stable storage. H2 writes a commit's chunk to the file at the
     * commit ({@code WRITE_DELAY 0}) but never forces it: the operating system may hold it in its page cache for
     * half a minute, which a crash of the process survives and a power cut does not.
     */
    static void force(Connection connection) throws SQLException {
        store(connection).ifPresent(MVStore::sync);
    }

    private static Optional<MVStore> store(Connection connection) throws SQLException {
        if (!connection.isWrapperFor(JdbcConnection.class)) {
            return Optional.empty();
        }
        JdbcConnection h2 = connection.unwrap(JdbcConnection.class);
        if (!(h2.getSession() instanceof SessionLocal local)) {
            return Optional.empty();
        }
        return Optional.of(local.getDatabase().getStore().getMvStore());
    }

    /**
     * Whether a failure, or any of its causes, is H2 finding its file damaged: a page that does not check out
     * ({@code MVStoreException} with {@code ERROR_FILE_CORRUPT}, which a read reports as SQL error 50000 or 90030).
     * Such a read fails the same way however often it is retried, unlike a lost connection or a database that
     * closed itself, which fresh connections cure.
     */
    static boolean isCorruption(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof MVStoreException store && store.getErrorCode() == DataUtils.ERROR_FILE_CORRUPT) {
                return true;
            }
            if (cause instanceof SQLException sql && sql.getErrorCode() == ErrorCode.FILE_CORRUPTED_1) {
                return true;
            }
        }
        return false;
    }
}
