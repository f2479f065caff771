package eu.arrowhead.eventhandler.security;

import jakarta.annotation.Priority;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.Context;
import java.lang.reflect.Method;

/**
 * Lets only the management identity reach the resources under {@code /eventhandler/mgmt} (events, topics,
 * health and the push subscriptions): one rule for every management resource, present and future. It
 * goes by the {@code @Path} of the resource class and method the request matched, not by the request's
 * path, so that no spelling of a path slips past it.
 */
@Priority(Priorities.AUTHORIZATION)
public final class ManagementAccess implements ContainerRequestFilter {
    private static final String PREFIX = "eventhandler/mgmt";

    private final Authorizer authorizer;
    @Context
    private ResourceInfo resource;

    public ManagementAccess(Authorizer authorizer) {
        this.authorizer = authorizer;
    }

    @Override
    public void filter(ContainerRequestContext request) {
        Class<?> type = resource.getResourceClass();
        Method method = resource.getResourceMethod();
        String path = pathOf(type == null ? null : type.getAnnotation(Path.class)) + "/"
                + pathOf(method == null ? null : method.getAnnotation(Path.class));
        if (path.replaceAll("/+", "/").replaceFirst("^/", "").startsWith(PREFIX)) {
            authorizer.requireManagement(Caller.of(request));
        }
    }

    private static String pathOf(Path path) {
        return path == null ? "" : path.value();
    }
}
