package eu.arrowhead.eventhandler.http;

import org.glassfish.grizzly.filterchain.BaseFilter;
import org.glassfish.grizzly.filterchain.FilterChainBuilder;
import org.glassfish.grizzly.filterchain.FilterChainContext;
import org.glassfish.grizzly.filterchain.FilterChainEvent;
import org.glassfish.grizzly.filterchain.NextAction;
import org.glassfish.grizzly.http.HttpEvents;
import org.glassfish.grizzly.http.HttpHeader;
import org.glassfish.grizzly.http.HttpServerFilter;
import org.glassfish.grizzly.http.server.AddOn;
import org.glassfish.grizzly.http.server.NetworkListener;

/**
 * Serves a request that offers a protocol upgrade ({@code Upgrade: h2c}, {@code websocket}) as the plain
 * HTTP/1.1 request it also is, as RFC 9110 lets a server do.
 *
 * <p>Grizzly takes every request with an {@code Upgrade} header for the start of another protocol: it
 * stops framing the body by its {@code Content-Length}, so a handler reading a POST body waits for an end
 * that never comes and the client hangs until its timeout. The JDK's {@code java.net.http.HttpClient} offers
 * {@code h2c} by default, as does {@code curl --http2}, so without this their publishes and subscriptions
 * would hang. Grizzly announces such a request with an event before it parses the body; this filter, next
 * to the codec, takes the upgrade back out of the request there.
 */
public final class IgnoredUpgrades extends BaseFilter implements AddOn {

    @Override
    public void setup(NetworkListener listener, FilterChainBuilder builder) {
        builder.add(builder.indexOfType(HttpServerFilter.class) + 1, this);
    }

    @Override
    public NextAction handleEvent(FilterChainContext ctx, FilterChainEvent event) {
        if (event.type() == HttpEvents.IncomingHttpUpgradeEvent.TYPE) {
            HttpHeader request = ((HttpEvents.IncomingHttpUpgradeEvent) event).getHttpHeader();
            request.setIgnoreContentModifiers(false);
            request.getUpgradeDC().recycle();
            return ctx.getStopAction();
        }
        return ctx.getInvokeAction();
    }
}
