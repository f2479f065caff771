package eu.arrowhead.eventhandler.security;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Locale;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.ssl.SSLUtils;

/**
 * Reads the caller's identity from the client certificate of a TLS connection: the first label of the
 * certificate's CN, in lower case ({@code publisher} for {@code CN=publisher.testcloud.aitia.arrowhead.eu}),
 * as Arrowhead 4.x does.
 *
 * <p>The certificate is parsed once per TLS session: the caller is kept in the session
 * ({@link SSLSession#putValue}), so the requests of a kept-alive connection (a publisher's, above all) look
 * it up in a map.
 */
public final class ClientCertificates {
    private static final String SESSION_KEY = Caller.ATTRIBUTE;

    private ClientCertificates() {
    }

    /** The caller of a request that came over TLS; {@link Caller#ANONYMOUS} without a usable certificate. */
    public static Caller caller(Request request) {
        SSLEngine engine = SSLUtils.getSSLEngine(request.getConnection());
        if (engine == null) {
            return Caller.ANONYMOUS;
        }
        SSLSession session = engine.getSession();
        if (session.getValue(SESSION_KEY) instanceof Caller known) {
            return known;
        }
        Caller caller = caller(session);
        session.putValue(SESSION_KEY, caller);
        return caller;
    }

    private static Caller caller(SSLSession session) {
        try {
            Certificate[] chain = session.getPeerCertificates();
            if (chain.length > 0 && chain[0] instanceof X509Certificate certificate) {
                String name = systemName(certificate.getSubjectX500Principal().getName());
                return name == null ? Caller.ANONYMOUS : new Caller(name);
            }
        } catch (SSLPeerUnverifiedException e) {
            // no client certificate
        }
        return Caller.ANONYMOUS;
    }

    /**
     * The system name in a certificate's subject (an RFC 2253 name): the CN up to its first dot, lower
     * case; {@code null} when there is no CN.
     */
    public static String systemName(String subject) {
        try {
            for (Rdn rdn : new LdapName(subject).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    String cn = rdn.getValue().toString();
                    int dot = cn.indexOf('.');
                    String name = (dot < 0 ? cn : cn.substring(0, dot)).trim().toLowerCase(Locale.ROOT);
                    return name.isEmpty() ? null : name;
                }
            }
        } catch (InvalidNameException e) {
            // a name the JDK produced itself; not expected, and then there is no identity
        }
        return null;
    }
}
