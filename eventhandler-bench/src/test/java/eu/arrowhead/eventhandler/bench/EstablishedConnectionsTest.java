package eu.arrowhead.eventhandler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.junit.jupiter.api.Test;

class EstablishedConnectionsTest {

    /** Loopback lists each connection from both ends: only the accepting end, whose local port it is, counts. */
    @Test
    void countsTheConnectionsAcceptedOnAPortOnceEach() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
            int port = listener.getLocalPort();
            assertEquals(0, EstablishedConnections.to(port));
            try (Socket first = new Socket(InetAddress.getLoopbackAddress(), port);
                 Socket firstAccepted = listener.accept();
                 Socket second = new Socket(InetAddress.getLoopbackAddress(), port);
                 Socket secondAccepted = listener.accept()) {
                assertEquals(2, EstablishedConnections.to(port));
            }
        }
    }
}
