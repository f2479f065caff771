package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.util.OptionalLong;

/**
 * A server already running, given by its address. Its threads and memory are seen only through
 * {@code /proc} and only when its process id is given: the server's heap and thread names stay hidden.
 */
record RemoteTarget(URI baseUri, OptionalLong pid) implements Target {

    @Override
    public ResourceSnapshot snapshot() {
        if (pid.isEmpty()) {
            return new ResourceSnapshot(null, null, null, null);
        }
        ProcStatus status = ProcStatus.read(Long.toString(pid.getAsLong()));
        return new ResourceSnapshot(status.threads(), null, status.rssBytes(), null);
    }

    @Override
    public void close() {
        // the server is not ours to stop
    }
}
