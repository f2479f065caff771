package eu.arrowhead.eventhandler.api;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.UnrecoverableKeyException;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Builds the TLS context of an Arrowhead system from its PKCS12 files: the key store with its own
 * certificate and key (the certificate's CN names the system), and the trust store with the CAs it trusts
 * (usually the local cloud's certificate). The Event Handler uses it for its listener; the publisher and
 * subscriber clients take the result in their builders' {@code sslContext}. JDK classes only.
 */
public final class TlsContext {

    private TlsContext() {
    }

    /**
     * A context for mutual TLS.
     *
     * @param keyStore    {@code null} for a client without a certificate of its own
     * @param keyPassword the key's password; {@code null} or empty means the key store's
     * @param trustStore  {@code null} to trust the CAs the JVM trusts by default ({@code cacerts})
     * @throws IOException naming the file and what is wrong with it (missing, wrong password, not PKCS12)
     */
    public static SSLContext fromPkcs12(Path keyStore, String keyStorePassword, String keyPassword,
                                        Path trustStore, String trustStorePassword) throws IOException {
        KeyStore keys = keyStore == null ? null : load("key store", keyStore, keyStorePassword);
        KeyStore trusted = trustStore == null ? null : load("trust store", trustStore, trustStorePassword);
        String keyPass = keyPassword == null || keyPassword.isEmpty() ? keyStorePassword : keyPassword;
        try {
            KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            if (keys != null) {
                keyManagers.init(keys, chars(keyPass));
            }
            TrustManagerFactory trustManagers =
                    TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trustManagers.init(trusted);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys == null ? null : keyManagers.getKeyManagers(), trustManagers.getTrustManagers(), null);
            return context;
        } catch (UnrecoverableKeyException e) {
            throw new IOException("the key in the key store " + keyStore + " cannot be read: wrong key password", e);
        } catch (GeneralSecurityException e) {
            throw new IOException("the key store " + keyStore + " or the trust store " + trustStore
                    + " cannot be used: " + e.getMessage(), e);
        }
    }

    private static KeyStore load(String what, Path file, String password) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(in, chars(password));
            return store;
        } catch (NoSuchFileException e) {
            throw new IOException("the " + what + " " + file + " does not exist", e);
        } catch (IOException e) {
            String reason = e.getCause() instanceof UnrecoverableKeyException ? "wrong password"
                    : "not a PKCS12 file? " + e.getMessage();
            throw new IOException("the " + what + " " + file + " cannot be opened: " + reason, e);
        } catch (GeneralSecurityException e) {
            throw new IOException("the " + what + " " + file + " cannot be opened: " + e.getMessage(), e);
        }
    }

    private static char[] chars(String password) {
        return password == null ? new char[0] : password.toCharArray();
    }
}
