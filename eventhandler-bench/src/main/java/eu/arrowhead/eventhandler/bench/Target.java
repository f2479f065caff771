package eu.arrowhead.eventhandler.bench;

import java.net.URI;

/** The server under test: one this process started, or one already running elsewhere. */
interface Target extends AutoCloseable {

    /** {@code http://host:port}. */
    URI baseUri();

    /** The server process's threads and memory, as far as they can be seen from here. */
    ResourceSnapshot snapshot();

    @Override
    void close();
}
