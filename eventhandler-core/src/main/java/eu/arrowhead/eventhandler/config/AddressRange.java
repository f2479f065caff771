package eu.arrowhead.eventhandler.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * A block of IP addresses in CIDR notation ({@code 169.254.0.0/16}, {@code fe80::/10}); an address without a
 * prefix length is a block of one. IPv4 and IPv6 blocks never contain each other's addresses; an IPv4-mapped
 * IPv6 address is read by Java as the IPv4 address it maps, so an IPv4 block covers it too.
 *
 * @param text   as written in the configuration, for messages that name the rule
 * @param bytes  the network address, 4 or 16 bytes
 * @param prefix how many leading bits an address must share with it
 */
public record AddressRange(String text, byte[] bytes, int prefix) {

    /**
     * Reads one block. Only numbers are taken, never host names: a rule must not depend on DNS.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static AddressRange parse(String text) {
        String trimmed = text.strip();
        int slash = trimmed.indexOf('/');
        String address = slash < 0 ? trimmed : trimmed.substring(0, slash);
        boolean v6 = address.indexOf(':') >= 0;
        if (address.isEmpty() || !(v6 ? address.matches("[0-9A-Fa-f:.]+") : address.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}"))) {
            throw new IllegalArgumentException("'" + trimmed + "' is not an IPv4 or IPv6 address with an optional"
                    + " /prefix-length");
        }
        byte[] bytes;
        try {
            // A literal: InetAddress parses it without a lookup.
            bytes = InetAddress.getByName(address).getAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("'" + trimmed + "' is not an IP address: " + e.getMessage());
        }
        int bits = bytes.length * 8;
        int prefix = bits;
        if (slash >= 0) {
            try {
                prefix = Integer.parseInt(trimmed.substring(slash + 1));
            } catch (NumberFormatException e) {
                prefix = -1;
            }
            if (prefix < 0 || prefix > bits) {
                throw new IllegalArgumentException("'" + trimmed + "' has a prefix length outside 0 to " + bits);
            }
        }
        return new AddressRange(trimmed, bytes, prefix);
    }

    /**
     * The IPv4 address that an IPv4-mapped ({@code ::ffff:a.b.c.d}) or IPv4-compatible ({@code ::a.b.c.d}) IPv6
     * address carries, else the address itself. Java unwraps such an address only when it is written as a
     * literal; one that a name resolves to stays a 16-byte address, which an IPv4 block would not contain
     * although the connection goes to the IPv4 address (a name resolving to {@code ::ffff:169.254.169.254}).
     */
    public static InetAddress plain(InetAddress address) {
        byte[] bytes = address.getAddress();
        if (bytes.length != 16) {
            return address;
        }
        for (int i = 0; i < 10; i++) {
            if (bytes[i] != 0) {
                return address;
            }
        }
        boolean mapped = bytes[10] == (byte) 0xFF && bytes[11] == (byte) 0xFF;
        boolean compatible = bytes[10] == 0 && bytes[11] == 0 && (bytes[12] | bytes[13] | bytes[14]) != 0;
        if (!mapped && !compatible) {
            return address;
        }
        try {
            return InetAddress.getByAddress(Arrays.copyOfRange(bytes, 12, 16));
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Whether the address lies in this block; an IPv4 address carried in an IPv6 one counts as that IPv4 address. */
    public boolean contains(InetAddress address) {
        byte[] other = plain(address).getAddress();
        if (other.length != bytes.length) {
            return false;
        }
        int full = prefix / 8;
        for (int i = 0; i < full; i++) {
            if (other[i] != bytes[i]) {
                return false;
            }
        }
        int rest = prefix % 8;
        if (rest == 0) {
            return true;
        }
        int mask = (0xFF << (8 - rest)) & 0xFF;
        return (other[full] & mask) == (bytes[full] & mask);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof AddressRange range && range.prefix == prefix && Arrays.equals(range.bytes, bytes);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(bytes) + prefix;
    }

    @Override
    public String toString() {
        return text;
    }
}
