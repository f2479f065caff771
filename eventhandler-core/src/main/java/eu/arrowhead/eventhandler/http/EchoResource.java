package eu.arrowhead.eventhandler.http;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/** {@code GET /eventhandler/echo}: Arrowhead's health check. */
@Path("eventhandler/echo")
public final class EchoResource {

    @GET
    @Produces(MediaType.TEXT_PLAIN)
    public String echo() {
        return "Got it!";
    }
}
