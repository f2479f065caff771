package eu.arrowhead.eventhandler.security;

import jakarta.ws.rs.Path;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.DynamicFeature;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.FeatureContext;
import java.lang.reflect.AnnotatedElement;

/**
 * Lets only the management identity reach the resources under {@code /eventhandler/mgmt} (events, topics,
 * health and the push subscriptions): one rule for every management resource, present and future. It
 * goes by the {@code @Path} of each resource class and method, not by the request's path, so that no
 * spelling of a path slips past it; and it decides once per resource method, when Jersey starts, so a
 * request pays only for the check itself, and a request outside {@code mgmt} for nothing.
 */
public final class ManagementAccess implements DynamicFeature {
    private static final String PREFIX = "eventhandler/mgmt";

    private final Authorizer authorizer;

    public ManagementAccess(Authorizer authorizer) {
        this.authorizer = authorizer;
    }

    @Override
    public void configure(ResourceInfo resource, FeatureContext context) {
        String path = (pathOf(resource.getResourceClass()) + "/" + pathOf(resource.getResourceMethod()))
                .replaceAll("/+", "/").replaceFirst("^/", "");
        if (path.startsWith(PREFIX)) {
            context.register(new Check(authorizer), Priorities.AUTHORIZATION);
        }
    }

    private static String pathOf(AnnotatedElement element) {
        Path path = element == null ? null : element.getAnnotation(Path.class);
        return path == null ? "" : path.value();
    }

    /** The check on a management method's requests. */
    private static final class Check implements ContainerRequestFilter {
        private final Authorizer authorizer;

        Check(Authorizer authorizer) {
            this.authorizer = authorizer;
        }

        @Override
        public void filter(ContainerRequestContext request) {
            authorizer.requireManagement(Caller.of(request));
        }
    }
}
