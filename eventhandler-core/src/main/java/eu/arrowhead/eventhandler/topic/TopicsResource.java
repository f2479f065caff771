package eu.arrowhead.eventhandler.topic;

import eu.arrowhead.eventhandler.api.TopicStats;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.List;

/** {@code GET /eventhandler/mgmt/topics}: every topic with its subscribers and counters. */
@Path("eventhandler/mgmt/topics")
public final class TopicsResource {
    private final Hub hub;

    public TopicsResource(Hub hub) {
        this.hub = hub;
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public List<TopicStats> topics() {
        return hub.stats();
    }
}
