package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The TCP connections established to a local port, as the kernel lists them in {@code /proc/net/tcp} and
 * {@code tcp6}: what {@code ss -tn state established '( sport = :PORT )'} counts, read without a tool. A
 * connection on loopback appears twice there, once from each end; only the accepting end has the port as its
 * local one, so each connection counts once.
 */
final class EstablishedConnections {
    private static final List<Path> TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));
    /** The {@code st} column's code for ESTABLISHED. */
    private static final String ESTABLISHED = "01";
    private static final int LOCAL_ADDRESS = 1;
    private static final int STATE = 3;

    private EstablishedConnections() {
    }

    /** How many connections to {@code port} on this machine are established now. */
    static int to(int port) {
        int count = 0;
        for (Path table : TABLES) {
            List<String> lines;
            try {
                lines = Files.readAllLines(table);
            } catch (IOException e) {
                // tcp6 is missing on a kernel without IPv6; tcp always exists on Linux.
                if (table == TABLES.get(0)) {
                    throw new BenchException("cannot read " + table + " (Linux only): " + e, e);
                }
                continue;
            }
            // The first line holds the column names.
            for (String line : lines.subList(1, lines.size())) {
                String[] fields = line.trim().split("\\s+");
                String local = fields[LOCAL_ADDRESS];
                // ADDRESS:PORT, the port in hexadecimal.
                if (fields[STATE].equals(ESTABLISHED)
                        && Integer.parseInt(local.substring(local.lastIndexOf(':') + 1), 16) == port) {
                    count++;
                }
            }
        }
        return count;
    }
}
