import java.io.IOException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarFile;
import java.util.regex.Pattern;

/**
 * CI check: every artifact's jar, as built, names its module for the module path with an
 * {@code Automatic-Module-Name} in its manifest, and the JVM's own module finder gives the jar that
 * name (not one made up from the file name). No two of the artifacts may share a package (a split
 * package cannot be loaded from the module path).
 *
 * <p>Run from the repository root after the jars are built ({@code .ci/run} does):
 * {@code java .ci/ModuleNames.java}. Exits 1 with one line per problem. Needs only Java 17.
 */
public final class ModuleNames {

    public static void main(String[] args) throws IOException {
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put(jar("target", "zkcoord"), "io.zkcoord");
        expected.put(jar("spring/target", "zkcoord-spring"), "io.zkcoord.spring");
        expected.put(jar("shedlock/target", "zkcoord-shedlock"), "io.zkcoord.shedlock");
        expected.put(jar("micrometer/target", "zkcoord-micrometer"), "io.zkcoord.micrometer");
        expected.put(jar("cli/target", "zkcoord-cli"), "io.zkcoord.cli");
        expected.put(jar("test/target", "zkcoord-test"), "io.zkcoord.test");
        expected.put("cli/target/zkcoord.jar", "io.zkcoord.cli");

        List<String> problems = new ArrayList<>();
        Map<String, String> packageOwners = new HashMap<>();
        for (Map.Entry<String, String> e : expected.entrySet()) {
            Path jar = Path.of(e.getKey());
            String name = e.getValue();
            if (!Files.isRegularFile(jar)) {
                problems.add(jar + ": not built (build every module first)");
                continue;
            }
            String declared;
            try (JarFile file = new JarFile(jar.toFile())) {
                declared = file.getManifest() == null ? null
                        : file.getManifest().getMainAttributes().getValue("Automatic-Module-Name");
            }
            if (!name.equals(declared)) {
                problems.add(jar + ": manifest Automatic-Module-Name is " + declared + ", expected " + name);
                continue;
            }
            if (jar.getFileName().toString().equals("zkcoord.jar")) {
                continue;   // the CLI's runnable jar bundles its dependencies: its manifest is what counts
            }
            Set<ModuleReference> found = ModuleFinder.of(jar).findAll();
            ModuleDescriptor module = found.iterator().next().descriptor();
            if (!module.isAutomatic() || !module.name().equals(name)) {
                problems.add(jar + ": on the module path it is module " + module.name() + ", expected " + name);
            }
            for (String pkg : module.packages()) {
                String other = packageOwners.putIfAbsent(pkg, name);
                if (other != null) {
                    problems.add("package " + pkg + " is in both " + other + " and " + name + " (a split package)");
                }
            }
            System.out.println("module-names: " + jar + " is module " + module.name() + " ("
                    + module.packages().size() + " packages)");
        }
        if (!problems.isEmpty()) {
            System.err.println("Module names of the built jars:");
            problems.forEach(p -> System.err.println("  " + p));
            System.exit(1);
        }
        System.out.println("module-names: every artifact names its module in its manifest");
    }

    /** @return the artifact's main jar in {@code dir} (any version; not its sources, javadoc or tests jar) */
    private static String jar(String dir, String artifactId) throws IOException {
        Path folder = Path.of(dir);
        if (Files.isDirectory(folder)) {
            try (var files = Files.list(folder)) {
                List<Path> jars = files.filter(f -> {
                    String n = f.getFileName().toString();
                    return n.matches(Pattern.quote(artifactId) + "-[0-9][^-]*(-SNAPSHOT)?\\.jar");
                }).toList();
                if (jars.size() == 1) {
                    return jars.get(0).toString();
                }
            }
        }
        return dir + "/" + artifactId + "-<version>.jar";
    }
}
