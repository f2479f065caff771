package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.api.TlsContext;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLContext;

/**
 * A local cloud's certificates, made at run time with the JDK's {@code keytool} into a temporary directory that
 * closing removes, so that no private key is ever checked in: a CA, and for each system a PKCS12 key store with
 * {@code CN=NAME.}{@value #DOMAIN} signed by it ({@code SAN=dns:localhost,ip:127.0.0.1}, so that clients keep their
 * host name check), and {@code truststore.p12} with the CA. Every store has the password {@value #PASSWORD}.
 * The Event Handler takes the first label of a certificate's CN as the caller's identity.
 */
final class BenchPki implements AutoCloseable {
    static final String PASSWORD = "bench-only";
    static final String DOMAIN = "bench.arrowhead.eu";
    private static final String CA = "bench-ca";
    private static final String TRUST_STORE = "truststore.p12";

    private final TempDirectory directory;

    private BenchPki(TempDirectory directory) {
        this.directory = directory;
    }

    /** Makes the CA and a certificate for each of {@code systems}: about a second of keytool per system. */
    static BenchPki create(List<String> systems) {
        BenchPki pki = new BenchPki(TempDirectory.create("eventhandler-bench-pki-"));
        try {
            pki.keytool(null, "-genkeypair", "-alias", CA, "-dname", "CN=" + CA + "." + DOMAIN, "-ext", "bc:c",
                    "-keystore", CA + ".p12");
            byte[] caPem = pki.keytool(null, "-exportcert", "-rfc", "-alias", CA, "-keystore", CA + ".p12");
            pki.keytool(caPem, "-importcert", "-noprompt", "-alias", CA, "-keystore", TRUST_STORE);
            // keytool is a JVM start each time: two systems at once keep both cores busy.
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                List<CompletableFuture<Void>> made = new ArrayList<>();
                for (String system : systems) {
                    made.add(CompletableFuture.runAsync(() -> pki.issue(system, caPem), pool));
                }
                made.forEach(CompletableFuture::join);
            } finally {
                pool.shutdown();
            }
            return pki;
        } catch (RuntimeException e) {
            pki.close();
            throw e instanceof CompletionException && e.getCause() instanceof RuntimeException cause ? cause : e;
        }
    }

    /**
     * {@code NAME.p12}: a key pair whose certificate the CA signs, imported back with the CA's certificate after
     * it so that the store holds the whole chain. The request and the certificate go through keytool's standard
     * input and output, leaving no file but the store.
     */
    private void issue(String system, byte[] caPem) {
        String store = system + ".p12";
        keytool(null, "-genkeypair", "-alias", system, "-dname", "CN=" + system + "." + DOMAIN, "-keystore", store);
        byte[] request = keytool(null, "-certreq", "-alias", system, "-keystore", store);
        byte[] certificate = keytool(request, "-gencert", "-rfc", "-alias", CA, "-keystore", CA + ".p12",
                "-validity", "30", "-ext", "SAN=dns:localhost,ip:127.0.0.1");
        byte[] chain = (new String(certificate, StandardCharsets.US_ASCII) + new String(caPem,
                StandardCharsets.US_ASCII)).getBytes(StandardCharsets.US_ASCII);
        keytool(chain, "-importcert", "-noprompt", "-alias", system, "-keystore", store);
    }

    /**
     * Runs keytool in the directory with {@code input} on its standard input; returns its standard output. Key
     * pairs are EC P-256 (what 4.x clouds increasingly use, and far quicker to make than RSA).
     */
    private byte[] keytool(byte[] input, String... args) {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                // A short-lived JVM: the JIT's top tier and a parallel collector would only cost it time.
                "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"));
        command.addAll(List.of(args));
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD));
        if (args[0].equals("-genkeypair")) {
            command.addAll(List.of("-keyalg", "EC", "-groupname", "secp256r1", "-validity", "30"));
        }
        try {
            Path errors = Files.createTempFile(directory.path(), "keytool-", ".err");
            Process process = new ProcessBuilder(command).directory(directory.path().toFile())
                    .redirectError(errors.toFile()).start();
            try (OutputStream stdin = process.getOutputStream()) {
                if (input != null) {
                    stdin.write(input);
                }
            }
            byte[] output = process.getInputStream().readAllBytes();
            if (process.waitFor() != 0) {
                throw new BenchException("keytool " + String.join(" ", args) + " failed: "
                        + new String(output, StandardCharsets.UTF_8) + Files.readString(errors));
            }
            Files.delete(errors);
            return output;
        } catch (IOException e) {
            throw new BenchException("cannot run keytool: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted while making the certificates", e);
        }
    }

    /** The key store of {@code system}, one of those it was made with. */
    Path keyStore(String system) {
        return directory.path().resolve(system + ".p12");
    }

    /** A TLS context with {@code system}'s certificate that trusts the CA. */
    SSLContext context(String system) {
        try {
            return TlsContext.fromPkcs12(keyStore(system), PASSWORD, null, directory.path().resolve(TRUST_STORE),
                    PASSWORD);
        } catch (IOException e) {
            throw new BenchException("cannot read the certificates of " + system + ": " + e, e);
        }
    }

    /** The Event Handler's settings for secure mode as {@code system}, as in config/eventhandler.properties. */
    Map<String, String> serverSettings(String system) {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("server.ssl.enabled", "true");
        settings.put("server.ssl.key-store", keyStore(system).toString());
        settings.put("server.ssl.key-store-password", PASSWORD);
        settings.put("server.ssl.trust-store", directory.path().resolve(TRUST_STORE).toString());
        settings.put("server.ssl.trust-store-password", PASSWORD);
        return settings;
    }

    @Override
    public void close() {
        directory.close();
    }
}
