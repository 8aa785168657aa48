package io.zkcoord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.session.ConnectString;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Connect strings are checked in the builder's setter, with a message naming the mistake; no server needed. */
class ConnectStringTest {

    /** Host names, IPv4, bracketed IPv6, a missing port (2181), blank entries and a chroot are read as ZooKeeper reads them. */
    @Test
    void validStringsParse() {
        ConnectString c = ConnectString.parse("zk1:2181, 10.0.0.2:2182,[::1]:2183,zk4,/app/x");
        assertEquals(List.of(new ConnectString.Server("zk1", 2181), new ConnectString.Server("10.0.0.2", 2182),
                new ConnectString.Server("::1", 2183), new ConnectString.Server("zk4", 2181)), c.servers());
        assertEquals("/app/x", c.chroot());
        assertEquals("", ConnectString.parse("127.0.0.1:2181/").chroot());
        assertEquals("[::1]:2183", c.servers().get(2).toString());
    }

    /** Each kind of bad syntax fails at once, in the setter, with IllegalArgumentException naming the string and the mistake. */
    @Test
    void badSyntaxFailsInTheSetterNamingTheMistake() {
        String[][] cases = {
            {"nohost:abc", "the port 'abc'"},
            {"zk1:0", "the port '0'"},
            {"zk1:65536", "the port '65536'"},
            {"zk1:", "the port ''"},
            {":2181", "no host name"},
            {",,", "names no server"},
            {"::1:2181", "IPv6 address in brackets"},
            {"[::1:2181", "never closes"},
            {"[::1]x", "after the IPv6 literal"},
            {"zk1:2181/app/", "chroot /app/"},
            {"zk1:2181/a//b", "chroot /a//b"},
        };
        for (String[] c : cases) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ZkClient.builder().connectString(c[0]), c[0]);
            assertTrue(e.getMessage().contains("'" + c[0] + "'") && e.getMessage().contains(c[1]),
                    c[0] + ": " + e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> ZkClient.builder().connectString(null));
        assertThrows(IllegalArgumentException.class, () -> ZkClient.builder().connectString(" "));
    }

    /**
     * ';' or spaces between servers (a habit from other tools) is named as such, with the string to
     * write instead, not taken for an IPv6 address without brackets; build() never sees it.
     */
    @Test
    void aWrongSeparatorBetweenServersSaysToUseAComma() {
        String[][] cases = {
            {"127.0.0.1:2181;127.0.0.1:2182", "use ',' between servers, not ';': '127.0.0.1:2181,127.0.0.1:2182'"},
            {"zk1:2181;zk2:2181;zk3:2181/app", "use ',' between servers, not ';': 'zk1:2181,zk2:2181,zk3:2181/app'"},
            {"[::1]:2181;[::1]:2182", "use ',' between servers, not ';': '[::1]:2181,[::1]:2182'"},
            {"zk1:2181 zk2:2181", "use ',' between servers, not spaces: 'zk1:2181,zk2:2181'"},
        };
        for (String[] c : cases) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ZkClient.builder().connectString(c[0]).build(), c[0]);
            assertTrue(e.getMessage().startsWith("connectString '" + c[0] + "' is not valid: "), e.getMessage());
            assertTrue(e.getMessage().contains(c[1]), c[0] + ": " + e.getMessage());
            assertTrue(!e.getMessage().contains("IPv6"), c[0] + ": " + e.getMessage());
        }
    }
}
