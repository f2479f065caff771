package eu.arrowhead.eventhandler.security;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.ServerProcess;
import eu.arrowhead.eventhandler.testing.TestPki;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client may not renegotiate TLS (1.2; 1.3 has no renegotiation): each renegotiation makes the server do
 * a handshake's work again on the same connection. The JDK reads its switch once per JVM, at the first
 * server handshake, so this runs the server as a process of its own: in the test JVM another test's TLS
 * server may have read it first.
 */
class TlsRenegotiationIT {

    @Test
    void aClientInitiatedRenegotiationIsRefused(@TempDir Path workingDirectory) throws Exception {
        TestPki pki = TestPki.get();
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.host=127.0.0.1", "--store.mode=off"));
        String[] settings = pki.serverSettings();
        for (int i = 0; i < settings.length; i += 2) {
            args.add("--" + settings[i] + "=" + settings[i + 1]);
        }
        try (ServerProcess server = ServerProcess.start(workingDirectory, args.toArray(String[]::new))) {
            int port = Integer.parseInt(server.await(Pattern.compile("listening on port (\\d+)"), 60).group(1));
            try (SSLSocket socket = (SSLSocket) pki.context("publisher").getSocketFactory()
                    .createSocket("127.0.0.1", port)) {
                socket.setEnabledProtocols(new String[] {"TLSv1.2"});
                socket.setSoTimeout(10_000);
                socket.startHandshake();
                assertTrue(echo(socket).startsWith("HTTP/1.1 200"), "served before the renegotiation");

                // The refusal is a fatal alert or a closed connection, at once; before, the renegotiation either
                // went through (openssl s_client -tls1_2, then R) or hung (this client).
                try {
                    socket.startHandshake();
                    String answer = echo(socket);
                    assertFalse(answer.startsWith("HTTP/1.1 200"), "the renegotiation was accepted");
                } catch (SocketTimeoutException e) {
                    throw new AssertionError("the server neither refused nor completed the renegotiation", e);
                } catch (SSLException | EOFException refused) {
                    // as it should
                }
            }
        }
    }

    /** An echo on the connection; what came back, empty if it closed. */
    private static String echo(SSLSocket socket) throws IOException {
        socket.getOutputStream().write("GET /eventhandler/echo HTTP/1.1\r\nHost: localhost\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        InputStream in = socket.getInputStream();
        ByteArrayOutputStream answer = new ByteArrayOutputStream();
        while (!answer.toString(StandardCharsets.US_ASCII).endsWith("Got it!")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            answer.write(b);
        }
        return answer.toString(StandardCharsets.US_ASCII);
    }
}
