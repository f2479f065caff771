package eu.arrowhead.eventhandler.store;

/** The event store's suite on the default database: embedded H2. */
class H2EventStoreTest extends EventStoreContract {
    @Override
    TestDatabase openDatabase() {
        return new H2Database();
    }
}
