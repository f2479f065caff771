package eu.arrowhead.eventhandler.registry;

/**
 * The Event Handler's services as Arrowhead 4.x registers them: the service definitions and URIs of
 * core-java-spring's {@code CoreSystemService}, so that consumers which look them up in the Service Registry
 * find this Event Handler exactly where they find the 4.x one.
 */
public enum CoreService {
    PUBLISH("event-publish", "/eventhandler/publish"),
    SUBSCRIBE("event-subscribe", "/eventhandler/subscribe"),
    UNSUBSCRIBE("event-unsubscribe", "/eventhandler/unsubscribe"),
    PUBLISH_AUTH_UPDATE("event-publish-auth-update", "/eventhandler/publish/authupdate");

    private final String definition;
    private final String uri;

    CoreService(String definition, String uri) {
        this.definition = definition;
        this.uri = uri;
    }

    /** The service definition, such as {@code event-publish}. */
    public String definition() {
        return definition;
    }

    /** The path the service is served at on this system. */
    public String uri() {
        return uri;
    }
}
