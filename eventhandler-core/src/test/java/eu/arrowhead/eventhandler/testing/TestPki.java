package eu.arrowhead.eventhandler.testing;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import eu.arrowhead.eventhandler.api.TlsContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * A test cloud's certificates, made with the JDK's {@code keytool} once per JVM into a temporary directory
 * (deleted at exit), all PKCS12 with the password {@value #PASSWORD}:
 *
 * <ul>
 *   <li>{@code truststore.p12}: the cloud's CA, {@code CN=testcloud.aitia.arrowhead.eu};</li>
 *   <li>{@code NAME.p12} for each of {@link #SYSTEMS}: {@code CN=NAME.testcloud.aitia.arrowhead.eu} signed by
 *       the CA, with {@code SAN=dns:localhost,ip:127.0.0.1} (the Event Handler's is {@value #SERVER});</li>
 *   <li>{@value #NAMELESS}{@code .p12}: signed by the CA, but its subject has no CN;</li>
 *   <li>{@value #INTRUDER}{@code .p12}: {@code CN=publisher.testcloud...} like the real publisher, but signed
 *       by another CA that nobody trusts;</li>
 *   <li>{@code intruder-truststore.p12}: that other CA;</li>
 *   <li>{@code nats.p12}, {@code nats-chain.pem}, {@code nats-key.pem}: a NATS server's, on demand
 *       ({@link #natsServerTls}).</li>
 * </ul>
 */
public final class TestPki {
    public static final String PASSWORD = "changeit";
    public static final String SERVER = "eventhandler";
    public static final String NAMELESS = "nameless";
    public static final String INTRUDER = "intruder";
    /** The NATS servers' certificate, made only when a test asks for it ({@link #natsServerTls}). */
    private static final String NATS = "nats";
    public static final List<String> SYSTEMS = List.of(SERVER, "publisher", "subscriber", "sysop", "authorization",
            "other");
    private static final String DOMAIN = ".testcloud.aitia.arrowhead.eu";
    private static TestPki instance;

    private final Path dir;

    private TestPki(Path dir) {
        this.dir = dir;
    }

    /** The certificates, made on the first call (a few seconds). */
    public static synchronized TestPki get() {
        if (instance == null) {
            try {
                instance = create(Files.createTempDirectory("eh-test-pki"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return instance;
    }

    private static TestPki create(Path dir) throws IOException {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(dir)));
        TestPki pki = new TestPki(dir);
        pki.authority("ca", "CN=testcloud.aitia.arrowhead.eu");
        pki.authority("rogue-ca", "CN=rogue.example");
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<Void>> made = new ArrayList<>();
            for (String system : SYSTEMS) {
                made.add(pool.submit(() -> pki.signed(system, "CN=" + system + DOMAIN, "ca")));
            }
            made.add(pool.submit(() -> pki.signed(NAMELESS, "O=Arrowhead,C=EU", "ca")));
            made.add(pool.submit(() -> pki.signed(INTRUDER, "CN=publisher" + DOMAIN, "rogue-ca")));
            made.add(pool.submit(() -> {
                pki.keytool("-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem",
                        "-keystore", "truststore.p12", "-storetype", "PKCS12", "-storepass", PASSWORD);
                return null;
            }));
            made.add(pool.submit(() -> {
                pki.keytool("-importcert", "-noprompt", "-alias", "ca", "-file", "rogue-ca.pem",
                        "-keystore", "intruder-truststore.p12", "-storetype", "PKCS12", "-storepass", PASSWORD);
                return null;
            }));
            for (Future<Void> future : made) {
                future.get();
            }
        } catch (Exception e) {
            throw new IllegalStateException("making the test certificates failed", e);
        } finally {
            pool.shutdownNow();
        }
        return pki;
    }

    /** A self-signed CA in {@code NAME.p12}, its certificate in {@code NAME.pem}. */
    private void authority(String name, String subject) throws IOException {
        genkeypair(name, subject, "-ext", "bc:c");
        keytool("-exportcert", "-rfc", "-alias", name, "-keystore", name + ".p12", "-storepass", PASSWORD,
                "-file", name + ".pem");
    }

    /** A key pair in {@code NAME.p12} whose certificate {@code ca} signed, with the CA's in its chain. */
    private Void signed(String name, String subject, String ca) throws IOException {
        return signed(name, subject, ca, "SAN=dns:localhost,ip:127.0.0.1");
    }

    private Void signed(String name, String subject, String ca, String names) throws IOException {
        genkeypair(name, subject);
        keytool("-certreq", "-alias", name, "-keystore", name + ".p12", "-storepass", PASSWORD, "-file", name + ".csr");
        keytool("-gencert", "-alias", ca, "-keystore", ca + ".p12", "-storepass", PASSWORD, "-infile", name + ".csr",
                "-outfile", name + ".pem", "-rfc", "-validity", "3650", "-ext", names);
        // The reply with the whole chain imports without the CA in the key store.
        Files.writeString(dir.resolve(name + "-chain.pem"), Files.readString(dir.resolve(name + ".pem"))
                + Files.readString(dir.resolve(ca + ".pem")));
        keytool("-importcert", "-noprompt", "-alias", name, "-keystore", name + ".p12", "-storepass", PASSWORD,
                "-file", name + "-chain.pem");
        return null;
    }

    private void genkeypair(String name, String subject, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("-genkeypair", "-alias", name, "-dname", subject,
                "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "3650", "-keystore", name + ".p12",
                "-storetype", "PKCS12", "-storepass", PASSWORD));
        args.addAll(List.of(extra));
        keytool(args.toArray(String[]::new));
    }

    private void keytool(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (process.waitFor() != 0) {
                throw new IOException("keytool " + String.join(" ", args) + " failed: " + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /**
     * The body of a {@code nats-server} {@code tls} block, as PEM files of this PKI: a NATS server's certificate
     * ({@code CN=nats...}, made on the first call) and key, the cloud's CA, and {@code verify: true}, so that a
     * client without a certificate the CA signed is refused (mutual TLS).
     */
    public String natsServerTls() {
        return natsServerTls(NATS, "SAN=dns:localhost,ip:127.0.0.1");
    }

    /**
     * The same for a NATS server whose certificate names only {@code host}: one that a node reaching it at
     * 127.0.0.1 must refuse, though the cloud's CA signed it.
     */
    public String natsServerTlsNaming(String host) {
        return natsServerTls(NATS + "-" + host, "SAN=dns:" + host);
    }

    private synchronized String natsServerTls(String name, String names) {
        Path key = dir.resolve(name + "-key.pem");
        try {
            if (!Files.exists(key)) {
                signed(name, "CN=" + name + DOMAIN, "ca", names);
                Files.writeString(key, privateKeyPem(keyStore(name)));
            }
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("making the NATS server's certificate failed", e);
        }
        return "cert_file: \"" + dir.resolve(name + "-chain.pem") + "\", key_file: \"" + key + "\", ca_file: \""
                + dir.resolve("ca.pem") + "\", verify: true, timeout: 2";
    }

    /** The key of a key store as PEM (PKCS#8), as nats-server reads it: keytool does not write keys. */
    private static String privateKeyPem(Path keyStore) throws IOException, GeneralSecurityException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keyStore)) {
            store.load(in, PASSWORD.toCharArray());
        }
        String alias = store.aliases().nextElement();
        byte[] pkcs8 = store.getKey(alias, PASSWORD.toCharArray()).getEncoded();
        return "-----BEGIN PRIVATE KEY-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(pkcs8)
                + "\n-----END PRIVATE KEY-----\n";
    }

    /** The key store of a system ({@link #SYSTEMS}, {@value #NAMELESS} or {@value #INTRUDER}). */
    public Path keyStore(String name) {
        return dir.resolve(name + ".p12");
    }

    /** The trust store with the cloud's CA. */
    public Path trustStore() {
        return dir.resolve("truststore.p12");
    }

    /** A context with {@code name}'s key that trusts the cloud's CA. */
    public SSLContext context(String name) {
        return context(keyStore(name), trustStore());
    }

    /** A context without a key of its own (no client certificate) that trusts the cloud's CA. */
    public SSLContext trustOnly() {
        try {
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            KeyStore store = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(trustStore())) {
                store.load(in, PASSWORD.toCharArray());
            }
            trust.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The trust store with only the intruder's CA, which signed none of the cloud's certificates. */
    public Path intruderTrustStore() {
        return dir.resolve("intruder-truststore.p12");
    }

    /** The intruder's context: its key, and trusting only its own CA. */
    public SSLContext intruderContext() {
        return context(keyStore(INTRUDER), intruderTrustStore());
    }

    private static SSLContext context(Path keyStore, Path trustStore) {
        try {
            return TlsContext.fromPkcs12(keyStore, PASSWORD, null, trustStore, PASSWORD);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * An HTTPS server (not started) on the loopback address, as the system {@code name}, that refuses a
     * client without a certificate from this PKI: a stand-in for an Arrowhead system in secure mode.
     */
    public HttpsServer httpsServer(String name, int port) throws IOException {
        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 16);
        server.setHttpsConfigurator(new HttpsConfigurator(context(name)) {
            @Override
            public void configure(HttpsParameters params) {
                // HttpsParameters.setNeedClientAuth alone is not applied; SSLParameters are.
                SSLParameters tls = getSSLContext().getDefaultSSLParameters();
                tls.setNeedClientAuth(true);
                params.setSSLParameters(tls);
            }
        });
        return server;
    }

    /**
     * The server's {@code server.ssl.*} settings followed by {@code more}, as key, value pairs for
     * {@link TestServer#start}.
     */
    public String[] serverSettings(String... more) {
        List<String> settings = new ArrayList<>(List.of(
                "server.ssl.enabled", "true",
                "server.ssl.key-store", keyStore(SERVER).toString(),
                "server.ssl.key-store-password", PASSWORD,
                "server.ssl.trust-store", trustStore().toString(),
                "server.ssl.trust-store-password", PASSWORD));
        settings.addAll(List.of(more));
        return settings.toArray(String[]::new);
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory; the OS cleans it up eventually
        }
    }
}
