package io.zkcoord.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** {@link FencedResource}: the rule alone, no server. */
class FencedResourceTest {

    @Test
    void acceptsTokensThatDoNotGoBackAndRefusesStaleOnes() {
        FencedResource resource = new FencedResource();
        assertEquals(OptionalLong.empty(), resource.highestToken());
        resource.write(7, "a");          // the first write, whatever its token
        resource.write(7, "b");          // the same holder again
        resource.write(9, "c");          // a later holder
        IllegalStateException stale = assertThrows(IllegalStateException.class, () -> resource.write(8, "d"));
        assertTrue(stale.getMessage().contains("stale fencing token 8") && stale.getMessage().contains("9"),
                stale.getMessage());
        assertEquals(List.of("a", "b", "c"), resource.accepted());
        assertEquals(1, resource.rejected());
        assertEquals(OptionalLong.of(9), resource.highestToken());
    }

    @Test
    void acceptedIsACopy() {
        FencedResource resource = new FencedResource();
        resource.write(1, "x");
        List<String> seen = resource.accepted();
        resource.write(2, "y");
        assertEquals(List.of("x"), seen);
        assertThrows(UnsupportedOperationException.class, () -> seen.add("z"));
    }
}
