package eu.arrowhead.eventhandler.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet6Address;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;

class AddressRangeTest {
    /** As a name resolves to it: Java keeps a resolved IPv4-mapped address as a 16-byte Inet6Address. */
    private static InetAddress resolvedIpv6(int... lastFour) throws Exception {
        byte[] bytes = new byte[16];
        bytes[10] = (byte) 0xFF;
        bytes[11] = (byte) 0xFF;
        for (int i = 0; i < 4; i++) {
            bytes[12 + i] = (byte) lastFour[i];
        }
        return Inet6Address.getByAddress(null, bytes, -1);
    }

    @Test
    void anIpv4AddressCarriedInAnIpv6OneIsCheckedAsThatIpv4Address() throws Exception {
        InetAddress metadata = resolvedIpv6(169, 254, 169, 254);
        assertEquals(16, metadata.getAddress().length, "the shape a resolver hands over");
        assertTrue(AddressRange.parse("169.254.0.0/16").contains(metadata));
        assertEquals(InetAddress.getByName("127.0.0.1"), AddressRange.plain(resolvedIpv6(127, 0, 0, 1)));
        assertTrue(AddressRange.plain(resolvedIpv6(127, 0, 0, 1)).isLoopbackAddress());
    }

    @Test
    void otherIpv6AddressesStayAsTheyAre() throws Exception {
        for (String address : new String[] {"::1", "::", "fe80::1", "2001:db8::a9fe:a9fe"}) {
            InetAddress given = InetAddress.getByName(address);
            assertEquals(given, AddressRange.plain(given), address);
        }
        assertFalse(AddressRange.parse("169.254.0.0/16").contains(InetAddress.getByName("2001:db8::a9fe:a9fe")));
    }
}
