package eu.arrowhead.eventhandler.metrics;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;

/** {@code GET /metrics}: Prometheus text format. */
@Path("metrics")
public final class MetricsResource {
    private final BrokerMetrics metrics;

    public MetricsResource(BrokerMetrics metrics) {
        this.metrics = metrics;
    }

    @GET
    public Response scrape() {
        StreamingOutput body = metrics::write;
        return Response.ok(body, metrics.contentType()).build();
    }
}
