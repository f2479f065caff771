package eu.arrowhead.eventhandler.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A server in secure mode with an ACL, and a client per system of the {@link TestPki}: what a test class of
 * the secure mode shares. Close it after the class.
 */
public final class SecureCloud implements AutoCloseable {
    private final TestPki pki;
    private final TestServer server;
    private final Map<String, TestClient> clients = new LinkedHashMap<>();

    private SecureCloud(TestPki pki, TestServer server) {
        this.pki = pki;
        this.server = server;
    }

    /** Starts the server with {@code acl} as its ACL file (written into {@code dir}); its own client is the publisher's. */
    public static SecureCloud start(Path dir, String acl) throws IOException {
        TestPki pki = TestPki.get();
        Path aclFile = Files.writeString(dir.resolve("acl"), acl);
        return new SecureCloud(pki, TestServer.start(pki.context("publisher"),
                pki.serverSettings("security.acl-file", aclFile.toString())));
    }

    public TestPki pki() {
        return pki;
    }

    public TestServer server() {
        return server;
    }

    /** The client that calls the server as {@code system}, one per system; closed with this. */
    public synchronized TestClient client(String system) {
        return clients.computeIfAbsent(system, name -> server.client(pki.context(name)));
    }

    @Override
    public synchronized void close() {
        List<AutoCloseable> all = new ArrayList<>(clients.values());
        all.add(server);
        TestServer.closeAll(all.toArray(AutoCloseable[]::new));
    }
}
