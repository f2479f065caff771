package eu.arrowhead.eventhandler.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One test JVM's turn at CI's MariaDB database. The unit tests run in two JVMs at once, and so do most process
 * tests (the surefire and failsafe configurations in the poms), and the tests on MariaDB all use the one database {@code
 * EVENTHANDLER_TEST_MYSQL_URL} names, each dropping its tables first: a test in the other JVM would have them
 * dropped under it. A file lock, which the operating system holds per process, makes the other JVM wait; within one
 * JVM tests run one at a time, so they never ask while they hold it.
 */
public final class MariaDbTurn implements AutoCloseable {
    private static final Path LOCK_FILE = Path.of(System.getProperty("java.io.tmpdir"),
            "eventhandler-test-mariadb.lock");

    private final FileChannel channel;
    private final FileLock lock;

    private MariaDbTurn(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Waits until no other test JVM uses the database; the turn lasts until closed. */
    public static MariaDbTurn take() {
        FileChannel channel = null;
        try {
            channel = FileChannel.open(LOCK_FILE, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            return new MariaDbTurn(channel, channel.lock());
        } catch (IOException e) {
            closeQuietly(channel);
            throw new UncheckedIOException("cannot take the turn at the test database (" + LOCK_FILE + ")", e);
        }
    }

    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException e) {
            // the channel's close below releases it too
        }
        closeQuietly(channel);
    }

    private static void closeQuietly(FileChannel channel) {
        if (channel == null) {
            return;
        }
        try {
            channel.close();
        } catch (IOException e) {
            // nothing is left to release
        }
    }
}
