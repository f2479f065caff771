package eu.arrowhead.eventhandler.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/** The server settings that put its event log into a database: a new H2 file, or a MySQL/MariaDB database. */
final class StoreSettings {

    private StoreSettings() {
    }

    /** An H2 database in {@code directory}, which starts empty when the directory does. */
    static Map<String, String> h2(TempDirectory directory) {
        return database("jdbc:h2:file:" + directory.path().resolve("log"), "sa");
    }

    /** {@code database} with {@code store.mode=mode}. */
    static Map<String, String> inMode(String mode, Map<String, String> database) {
        Map<String, String> settings = new LinkedHashMap<>(database);
        settings.put("store.mode", mode);
        return settings;
    }

    /** The database at {@code url}, as {@code user} with an empty password. */
    static Map<String, String> database(String url, String user) {
        return Map.of("store.url", url, "store.user", user, "store.password", "");
    }
}
