package eu.arrowhead.eventhandler.metrics;

import com.fasterxml.jackson.annotation.JsonInclude;
import eu.arrowhead.eventhandler.cluster.ClusterNode;
import eu.arrowhead.eventhandler.node.NodeBackend;
import eu.arrowhead.eventhandler.node.NodeHealth;
import eu.arrowhead.eventhandler.store.EventStore;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * {@code GET /eventhandler/mgmt/health}: 200 with {@code "status": "UP"} when everything works, 503 with
 * {@code "DEGRADED"} while the event store cannot write (events are still delivered live) or H2's file is damaged
 * (ids it cannot read: named in {@code reason}), or, in cluster mode,
 * while the node is cut off from NATS (it refuses publishes and streams). The body carries the store's state and
 * the node's view of the cluster either way, as the node's backend tells them ({@link NodeHealth}).
 * ({@code /eventhandler/echo} stays Arrowhead's plain liveness check.)
 */
@Path("eventhandler/mgmt/health")
public final class HealthResource {
    private final NodeBackend backend;

    public HealthResource(NodeBackend backend) {
        this.backend = backend;
    }

    /**
     * The health report.
     *
     * @param status  UP or DEGRADED
     * @param reason  why the event log is DEGRADED although it writes (its file is damaged); absent otherwise
     * @param store   the event store's state; absent when the store is off
     * @param cluster the node's view of the cluster; absent in single-node mode
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Health(String status, String reason, EventStore.Status store, ClusterNode.View cluster) {
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Response health() {
        NodeHealth health = backend.health();
        boolean up = health.isUp();
        return Response.status(up ? 200 : 503)
                .entity(new Health(up ? "UP" : "DEGRADED", health.damage(), health.log(), health.cluster())).build();
    }
}
