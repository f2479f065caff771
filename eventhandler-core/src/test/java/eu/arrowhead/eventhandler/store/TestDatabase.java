package eu.arrowhead.eventhandler.store;

import java.util.Map;

/** A real database for the event store's tests: embedded H2, or the MariaDB/MySQL server of CI. */
interface TestDatabase extends AutoCloseable {

    /** The store settings ({@code store.url}, user, password) of an empty log. */
    Map<String, String> settings();

    /** The same database's settings, reached through a TCP port that stands in for the server's own. */
    Map<String, String> settingsVia(int port);

    /** Host and port of the database server, for a {@code TcpProxy}; starts one if needed (H2). */
    String host();

    int port();

    @Override
    void close();
}
