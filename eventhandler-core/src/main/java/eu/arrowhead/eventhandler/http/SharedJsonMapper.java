package eu.arrowhead.eventhandler.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import jakarta.ws.rs.ext.ContextResolver;
import jakarta.ws.rs.ext.Provider;

/**
 * Hands Jersey's JSON provider the server's one {@link JsonMapper}, so that a subscription's body is read as
 * strictly as a publish. A class of its own and not a lambda: Jersey finds a context resolver by the type
 * argument of its class, which a lambda's class does not carry, and a lambda was silently passed over for
 * Jackson's default mapper (duplicate keys, strings as numbers and the like were accepted there).
 */
@Provider
public final class SharedJsonMapper implements ContextResolver<ObjectMapper> {
    @Override
    public ObjectMapper getContext(Class<?> type) {
        return JsonMapper.get();
    }
}
