package io.zkcoord.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Each kind of mistyped path is named as typed, with what to write instead (no server needed). */
class PathArgumentTest {

    @Test
    void eachMistakeNamesWhatWasTypedAndWhatToWrite() {
        String[][] cases = {
            {"locks/nightly-export", "PATH 'locks/nightly-export' must start with '/': write /locks/nightly-export"},
            {"/", "PATH '/' is the root, not a lock's path: name one under it, e.g. /locks/nightly-export"},
            {"//", "PATH '//' is the root, not a lock's path: name one under it, e.g. /locks/nightly-export"},
            {"/locks/x/", "PATH '/locks/x/' must not end with '/': write /locks/x"},
            {"locks/x/", "PATH 'locks/x/' must start with '/': write /locks/x"},
            {"/locks//x", "PATH '/locks//x' has an empty name between '//': write /locks/x"},
            {"/zookeeper/quota", "PATH '/zookeeper/quota' is inside /zookeeper, ZooKeeper's own tree: name a lock's"
                    + " path, e.g. /locks/nightly-export"},
            {"", "PATH is empty: name a lock's path, e.g. /locks/nightly-export"},
        };
        for (String[] c : cases) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> PathArgument.check("PATH", c[0]), c[0]);
            assertEquals(c[1], e.getMessage(), c[0]);
        }
        IllegalArgumentException dot = assertThrows(IllegalArgumentException.class,
                () -> PathArgument.check("--lock", "/locks/./x"));
        assertEquals(true, dot.getMessage().startsWith("--lock '/locks/./x' is not a ZooKeeper path: "), dot.getMessage());
    }

    @Test
    void aGoodPathPasses() {
        assertEquals("/locks/nightly-export", PathArgument.check("PATH", "/locks/nightly-export"));
    }
}
