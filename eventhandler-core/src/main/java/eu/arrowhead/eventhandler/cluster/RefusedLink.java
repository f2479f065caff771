package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.config.NatsLinkConfig;
import io.nats.client.AuthenticationException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Why a node could not connect to any NATS server at start, in one line that names the cause: the credentials, the
 * TLS handshake (and which side refused it), a TLS mismatch, or no answer at all.
 *
 * <p>The NATS client reports a refused TLS handshake only as "unable to connect": with TLS 1.3 the server checks
 * the client's certificate after the client thinks the handshake is done, and the client then waits for an answer
 * that never comes. So for a TLS link the node tries the handshake once more itself and reads the server's alert.
 */
final class RefusedLink {
    private static final Logger LOG = LoggerFactory.getLogger(RefusedLink.class);
    private static final String CREDENTIAL_KEYS = "cluster.user and cluster.password, cluster.token,"
            + " cluster.nkey-seed-file or cluster.credentials-file";
    private static final String RECEIVED_ALERT = "Received fatal alert";

    private RefusedLink() {
    }

    /**
     * @param failure      what connecting threw
     * @param serverError  the last error a NATS server sent while connecting ({@code -ERR}), or {@code null}
     * @param lastProblem  the last exception the NATS client reported while connecting, or {@code null}
     * @param tls          the link's TLS context, {@code null} for plaintext
     */
    static String why(NatsLinkConfig link, List<String> urls, IOException failure, String serverError,
                      Exception lastProblem, SSLContext tls, Duration timeout) {
        String servers = "cluster.nats-urls (" + String.join(",", urls) + ")";
        if (failure instanceof AuthenticationException
                || (serverError != null && serverError.contains("Authorization Violation"))) {
            return servers + ": " + credentialsRefused(link, serverError == null ? failure.getMessage() : serverError);
        }
        String problem = lastProblem == null ? "" : String.valueOf(rootCause(lastProblem).getMessage());
        if (problem.contains("SSL required by server")) {
            return servers + ": the NATS server requires TLS, but the URLs are nats://; use tls:// URLs";
        }
        if (problem.contains("SSL connection wanted by client")) {
            return servers + ": the NATS server has no TLS, but the URLs are tls://; give it a tls block"
                    + " (docs/cluster.md, \"A secured link\") or use nats:// URLs";
        }
        if (tls != null) {
            for (String url : urls) {
                String handshake = tryHandshake(url, tls, timeout, link);
                if (handshake != null) {
                    return servers + ": the TLS handshake with " + url + " failed: " + handshake;
                }
            }
        }
        return "no NATS server of " + servers + " answered: " + failure.getMessage()
                + (problem.isEmpty() ? "" : " (" + problem + ")");
    }

    private static String credentialsRefused(NatsLinkConfig link, String serverSaid) {
        if (link.credentials() == NatsLinkConfig.Credentials.NONE) {
            return "the NATS server requires credentials and the node has none (" + serverSaid + "); set "
                    + CREDENTIAL_KEYS;
        }
        return "the NATS server refused the node's credentials, " + link.credentials().keys() + " (" + serverSaid
                + ")";
    }

    /**
     * Connects as the NATS client does (the server's INFO in plaintext, then TLS) and says which side refuses the
     * handshake, or {@code null} when both accept it.
     */
    private static String tryHandshake(String url, SSLContext tls, Duration timeout, NatsLinkConfig link) {
        URI uri = URI.create(url);
        int millis = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
        try (Socket plain = new Socket()) {
            plain.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), millis);
            plain.setSoTimeout(millis);
            readLine(plain.getInputStream());
            try (SSLSocket secured = (SSLSocket) tls.getSocketFactory().createSocket(plain, uri.getHost(),
                    uri.getPort(), true)) {
                try {
                    secured.startHandshake();
                } catch (IOException e) {
                    if (String.valueOf(e.getMessage()).contains(RECEIVED_ALERT)) {
                        return certificateRefused(link, e);
                    }
                    return isAboutCertificates(e) ? serverNotTrusted(link, e) : String.valueOf(e.getMessage());
                }
                // TLS 1.3: the server's verdict on the node's certificate comes with the first read. A server that
                // took it answers CONNECT and PING with a line (PONG, or -ERR for the credentials); one that refused
                // it closes the connection, its alert maybe lost to the reset.
                return answered(secured, link);
            }
        } catch (IOException e) {
            return null;
        }
    }

    private static String answered(SSLSocket secured, NatsLinkConfig link) {
        IOException closed;
        try {
            OutputStream out = secured.getOutputStream();
            out.write("CONNECT {\"verbose\":false,\"tls_required\":true}\r\nPING\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            if (readLine(secured.getInputStream())) {
                return null;
            }
            closed = new IOException("the connection was closed after the handshake");
        } catch (SocketTimeoutException e) {
            return null;
        } catch (IOException e) {
            closed = e;
        }
        return certificateRefused(link, closed);
    }

    /** The alert the server sent may be lost to its reset of the connection: it is not quoted. */
    private static String certificateRefused(NatsLinkConfig link, IOException e) {
        LOG.debug("the NATS server ended the TLS handshake: {}", e.toString());
        if (link.keyStore() == null) {
            return "the NATS server requires a client certificate and the node presents none; set"
                    + " cluster.tls-key-store, or run in secure mode, whose key store is then presented";
        }
        return "the NATS server refused the node's certificate from " + link.keyStoreWhence() + "; the NATS server's"
                + " ca_file must hold the CA that signed it";
    }

    private static String serverNotTrusted(NatsLinkConfig link, IOException e) {
        return "the node does not trust the NATS server's certificate (trust store: " + link.trustStoreWhence()
                + "): " + rootCause(e).getMessage();
    }

    /** Whether a whole line came before the end of the stream. */
    private static boolean readLine(InputStream in) throws IOException {
        int c;
        do {
            c = in.read();
        } while (c != -1 && c != '\n');
        return c == '\n';
    }

    /** Whether the node's own check of the server's certificate (chain, validity, name) failed. */
    private static boolean isAboutCertificates(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof CertificateException || cause instanceof CertPathBuilderException
                    || cause instanceof CertPathValidatorException) {
                return true;
            }
        }
        return false;
    }

    private static Throwable rootCause(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return cause;
    }
}
