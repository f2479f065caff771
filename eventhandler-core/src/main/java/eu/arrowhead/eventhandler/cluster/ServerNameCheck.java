package eu.arrowhead.eventhandler.cluster;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.security.KeyManagementException;
import java.security.SecureRandom;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLContextSpi;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;

/**
 * A TLS context whose client sockets check that the NATS server's certificate names the host of its URL, as HTTPS
 * does. jnats checks only that a trusted CA signed it: in secure mode the trust store is the cloud's CA, which signs
 * every system of the cloud, so without this any of them could pose as a NATS server and be handed the node's
 * credentials and every event.
 */
final class ServerNameCheck {
    private ServerNameCheck() {
    }

    /** {@code context}, checking the server's name on every socket it makes. */
    static SSLContext of(SSLContext context) {
        return new SSLContext(new CheckingSpi(context), context.getProvider(), context.getProtocol()) {
        };
    }

    private static final class CheckingSpi extends SSLContextSpi {
        private final SSLContext context;

        CheckingSpi(SSLContext context) {
            this.context = context;
        }

        @Override
        protected void engineInit(KeyManager[] keys, TrustManager[] trust, SecureRandom random)
                throws KeyManagementException {
            throw new KeyManagementException("already initialised");
        }

        @Override
        protected SSLSocketFactory engineGetSocketFactory() {
            return new CheckingFactory(context.getSocketFactory());
        }

        @Override
        protected SSLServerSocketFactory engineGetServerSocketFactory() {
            return context.getServerSocketFactory();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine() {
            return checking(context.createSSLEngine());
        }

        @Override
        protected SSLEngine engineCreateSSLEngine(String host, int port) {
            return checking(context.createSSLEngine(host, port));
        }

        @Override
        protected SSLSessionContext engineGetServerSessionContext() {
            return context.getServerSessionContext();
        }

        @Override
        protected SSLSessionContext engineGetClientSessionContext() {
            return context.getClientSessionContext();
        }

        private static SSLEngine checking(SSLEngine engine) {
            SSLParameters parameters = engine.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            engine.setSSLParameters(parameters);
            return engine;
        }
    }

    private static final class CheckingFactory extends SSLSocketFactory {
        private final SSLSocketFactory factory;

        CheckingFactory(SSLSocketFactory factory) {
            this.factory = factory;
        }

        @Override
        public String[] getDefaultCipherSuites() {
            return factory.getDefaultCipherSuites();
        }

        @Override
        public String[] getSupportedCipherSuites() {
            return factory.getSupportedCipherSuites();
        }

        @Override
        public Socket createSocket(Socket socket, String host, int port, boolean autoClose) throws IOException {
            return checking(factory.createSocket(socket, host, port, autoClose));
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            return checking(factory.createSocket(host, port));
        }

        @Override
        public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
            return checking(factory.createSocket(host, port, localHost, localPort));
        }

        @Override
        public Socket createSocket(InetAddress host, int port) throws IOException {
            return checking(factory.createSocket(host, port));
        }

        @Override
        public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
                throws IOException {
            return checking(factory.createSocket(address, port, localAddress, localPort));
        }

        private static Socket checking(Socket socket) {
            SSLSocket tls = (SSLSocket) socket;
            SSLParameters parameters = tls.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            tls.setSSLParameters(parameters);
            return tls;
        }
    }
}
