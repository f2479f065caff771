package eu.arrowhead.eventhandler.store;

import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The event store's suite on MariaDB or MySQL, when {@code -Deventhandler.test.mysql-url} names one (CI's
 * {@code .ci/run} does); skipped otherwise, so that {@code mvn verify} needs no database server.
 */
@EnabledIfSystemProperty(named = MariaDbDatabase.URL_PROPERTY, matches = ".+")
class MariaDbEventStoreTest extends EventStoreContract {
    @Override
    TestDatabase openDatabase() {
        return new MariaDbDatabase();
    }
}
