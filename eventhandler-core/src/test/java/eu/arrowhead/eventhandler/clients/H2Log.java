package eu.arrowhead.eventhandler.clients;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * An H2 event log in a directory of its own, for servers that stop and start again on it: event ids continue
 * across the restart, so a client can resume.
 */
record H2Log(Path directory) {
    /** The settings of a server on this log (async mode, as by default), then {@code more} (key, value...). */
    String[] serverSettings(String... more) {
        List<String> settings = new ArrayList<>(List.of("store.mode", "async",
                "store.url", "jdbc:h2:file:" + directory.resolve("log"), "store.user", "sa", "store.password", ""));
        settings.addAll(List.of(more));
        return settings.toArray(String[]::new);
    }
}
