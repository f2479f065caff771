package eu.arrowhead.eventhandler.clients;

import eu.arrowhead.eventhandler.testing.TestServer;

/** The npm {@code eventsource} package (pinned in src/test/js/package.json) in Node.js. */
class NpmEventSourceTest extends EventSourceContract {
    @Override
    NodeClients.Kind kind() {
        return NodeClients.Kind.NPM;
    }

    @Override
    void open(String source, TestServer server, String query, String... eventTypes) throws InterruptedException {
        clients.open(null, source, server.uri("/eventhandler/events" + query), eventTypes);
    }
}
