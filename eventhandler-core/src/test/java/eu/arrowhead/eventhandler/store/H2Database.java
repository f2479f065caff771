package eu.arrowhead.eventhandler.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.Map;
import org.h2.tools.Server;

/**
 * An H2 log in a new temporary directory: an embedded file database like the default, or the same file
 * served by H2's TCP server when a test must reach it through a port (to cut it off).
 */
final class H2Database implements TestDatabase {
    private final Path directory;
    private Server tcpServer;

    H2Database() {
        try {
            directory = Files.createTempDirectory("eventhandler-h2-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public Map<String, String> settings() {
        // A lock wait as long as MySQL's, rather than H2's 1 s, for holdWrites.
        return Map.of("store.url", "jdbc:h2:file:" + directory.resolve("log") + ";LOCK_TIMEOUT=60000", "store.user",
                "sa", "store.password", "", "store.id-mark-file", idMarkFile());
    }

    @Override
    public Map<String, String> settingsVia(int port) {
        return Map.of("store.url", "jdbc:h2:tcp://127.0.0.1:" + port + "/log;DB_CLOSE_DELAY=-1", "store.user", "sa",
                "store.password", "", "store.id-mark-file", idMarkFile());
    }

    /** The log's id mark, the same whether the file is opened directly or through the TCP server. */
    private String idMarkFile() {
        return directory.resolve("log.ids").toString();
    }

    @Override
    public String host() {
        return "127.0.0.1";
    }

    @Override
    public synchronized int port() {
        if (tcpServer == null) {
            try {
                tcpServer = Server.createTcpServer("-tcpPort", "0", "-baseDir", directory.toString(),
                        "-ifNotExists").start();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
        return tcpServer.getPort();
    }

    @Override
    public synchronized void close() {
        if (tcpServer != null) {
            tcpServer.stop();
        }
    }
}
