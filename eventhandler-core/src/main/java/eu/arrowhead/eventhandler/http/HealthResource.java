package eu.arrowhead.eventhandler.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import eu.arrowhead.eventhandler.store.EventStore;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * {@code GET /eventhandler/mgmt/health}: 200 with {@code "status": "UP"} when everything works, 503 with
 * {@code "DEGRADED"} while the event store cannot write (events are still delivered live). The body
 * carries the store's state either way. ({@code /eventhandler/echo} stays Arrowhead's plain liveness check.)
 */
@Path("eventhandler/mgmt/health")
public final class HealthResource {
    private final EventStore store;

    /** @param store the event store, or {@code null} when {@code store.mode=off} */
    public HealthResource(EventStore store) {
        this.store = store;
    }

    /**
     * The health report.
     *
     * @param status UP or DEGRADED
     * @param store  the event store's state; absent when the store is off
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Health(String status, EventStore.Status store) {
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Response health() {
        EventStore.Status status = store == null ? null : store.status();
        boolean up = status == null || status.isUp();
        return Response.status(up ? 200 : 503).entity(new Health(up ? "UP" : "DEGRADED", status)).build();
    }
}
