package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs {@code scripts/install-raspberrypi.sh} into a staging directory (no root, no systemctl) and checks
 * what a Raspberry Pi would get: the files, the unit, and that running it again keeps the operator's edits.
 */
class InstallScriptTest {
    private static final Path SCRIPT = Path.of("..", "scripts", "install-raspberrypi.sh");

    private record Run(int exit, String output) {
    }

    private static Run run(String... args) throws IOException, InterruptedException {
        assumeTrue(Files.isExecutable(Path.of("/bin/bash")), "needs bash");
        List<String> command = new ArrayList<>(List.of("/bin/bash", SCRIPT.toString()));
        command.addAll(List.of(args));
        // The output goes to a file, so that a script that hangs fails the wait below instead of the read.
        Path output = Files.createTempFile("install-raspberrypi", ".log");
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(output.toFile()).start();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("the script did not end within 30 s: " + Files.readString(output));
            }
            return new Run(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(output);
        }
    }

    @Test
    void installsTheLayoutAndKeepsAnEditedConfigurationWhenRunAgain(@TempDir Path dir) throws Exception {
        Path jar = Files.writeString(dir.resolve("eventhandler.jar"), "version 1");
        Path root = dir.resolve("root");

        Run first = run("--root", root.toString(), "--jar", jar.toString());
        assertEquals(0, first.exit(), first.output());

        assertEquals("version 1", Files.readString(root.resolve("opt/eventhandler/eventhandler.jar")));
        Path etc = root.resolve("etc/eventhandler");
        assertTrue(Files.isDirectory(etc.resolve("certificates")));
        assertTrue(Files.isDirectory(root.resolve("var/lib/eventhandler")));
        assertEquals(Files.readString(Path.of("..", "config", "logback.xml")), Files.readString(etc.resolve("logback.xml")));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(
                etc.resolve("eventhandler.env"))), "the file for passwords is the owner's only");

        Properties config = new Properties();
        try (var in = Files.newBufferedReader(etc.resolve("eventhandler.properties"))) {
            config.load(in);
        }
        assertEquals("jdbc:h2:file:/var/lib/eventhandler/eventhandler", config.getProperty("store.url"));
        assertEquals("8455", config.getProperty("server.port"), "the rest are the documented defaults");
        String written = Files.readString(etc.resolve("eventhandler.properties"));
        assertTrue(written.contains("\n#server.ssl.key-store=/etc/eventhandler/certificates/eventhandler.p12\n")
                && written.contains("\n#server.ssl.trust-store=/etc/eventhandler/certificates/truststore.p12\n"),
                "the key stores of the layout, ready for secure mode");
        ConfigLoader.load(new String[] {"--config=" + etc.resolve("eventhandler.properties")}, Map.of());

        String unit = Files.readString(root.resolve("etc/systemd/system/eventhandler.service"));
        assertTrue(unit.contains("\nExecStart=/usr/bin/java $JAVA_OPTS -Dlogback.configurationFile=/etc/eventhandler/"
                + "logback.xml -jar /opt/eventhandler/eventhandler.jar --config=/etc/eventhandler/eventhandler.properties\n"),
                unit);
        for (String line : List.of("User=eventhandler", "Restart=on-failure", "NoNewPrivileges=yes",
                "ProtectSystem=strict", "ReadWritePaths=/var/lib/eventhandler", "PrivateTmp=yes",
                "EnvironmentFile=-/etc/eventhandler/eventhandler.env", "WantedBy=multi-user.target")) {
            assertTrue(unit.contains("\n" + line + "\n"), "the unit has " + line);
        }
        for (String flag : List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError", "-Xss512k")) {
            assertTrue(unit.contains(flag), "the JVM gets " + flag);
        }

        Files.writeString(etc.resolve("eventhandler.properties"), "server.port=9000\n");
        Files.writeString(jar, "version 2");
        Run second = run("--root", root.toString(), "--jar", jar.toString());
        assertEquals(0, second.exit(), second.output());
        assertEquals("server.port=9000\n", Files.readString(etc.resolve("eventhandler.properties")));
        assertEquals("version 2", Files.readString(root.resolve("opt/eventhandler/eventhandler.jar")));
        assertEquals(unit, Files.readString(root.resolve("etc/systemd/system/eventhandler.service")));
        assertTrue(second.output().contains("kept"), second.output());
    }

    /** Earlier versions wrote the key store paths uncommented, which now stop an insecure server's start. */
    @Test
    void anUpgradeCommentsOutTheKeyStoresOfEarlierVersionsWhileSecureModeIsOff(@TempDir Path dir) throws Exception {
        Path jar = Files.writeString(dir.resolve("eventhandler.jar"), "version 1");
        Path root = dir.resolve("root");
        Path etc = root.resolve("etc/eventhandler");
        Files.createDirectories(etc);
        String keyStores = "server.ssl.key-store=/etc/eventhandler/certificates/eventhandler.p12\n"
                + "server.ssl.trust-store=/etc/eventhandler/certificates/truststore.p12\n";
        Files.writeString(etc.resolve("eventhandler.properties"), "server.port=9000\n" + keyStores);
        Run upgrade = run("--root", root.toString(), "--jar", jar.toString());
        assertEquals(0, upgrade.exit(), upgrade.output());
        assertTrue(upgrade.output().contains("commented out the key store paths"), upgrade.output());
        EventHandlerConfig config = ConfigLoader.load(
                new String[] {"--config=" + etc.resolve("eventhandler.properties")}, Map.of());
        assertEquals(9000, config.serverPort(), "the operator's settings stay");

        Files.writeString(etc.resolve("eventhandler.properties"), "server.ssl.enabled=true\n" + keyStores);
        Run secure = run("--root", root.toString(), "--jar", jar.toString());
        assertEquals(0, secure.exit(), secure.output());
        assertEquals("server.ssl.enabled=true\n" + keyStores, Files.readString(etc.resolve("eventhandler.properties")),
                "in secure mode they take effect and stay");
    }

    @Test
    void explainsItselfAndRefusesUnknownOptions() throws Exception {
        Run help = run("--help");
        assertEquals(0, help.exit());
        assertTrue(help.output().contains("--root DIR"), help.output());
        assertEquals(2, run("--frobnicate").exit());
    }
}
