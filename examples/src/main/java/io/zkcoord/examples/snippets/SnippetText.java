package io.zkcoord.examples.snippets;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checks that every Java code block of README.md and docs/*.md is the text of a source file that
 * CI compiles and runs, so that no example in the documentation can rot.
 *
 * <p>In a document, a code block is tied to its source by a comment on the line just above its
 * opening fence:
 *
 * <pre>
 * &lt;!-- snippet: examples/src/main/java/io/zkcoord/examples/snippets/Recipes.java#mutex --&gt;
 * ```java
 * ...
 * ```
 * </pre>
 *
 * <p>In the source, the region is the lines between {@code // snippet:mutex} and {@code //
 * end:mutex} (in an XML file such as a pom, {@code <!-- snippet:name -->} and {@code <!--
 * end:name -->}), with their common indentation removed; marker lines of other regions inside it
 * are left out. The block must equal the region line for line (trailing spaces aside). A {@code
 * java} block without such a comment is an error too.
 */
final class SnippetText {

    private static final Pattern MARKER = Pattern.compile("^<!-- snippet: (\\S+)#(\\S+) -->$");
    private static final String JAVA_FENCE = "```java";
    private static final String FENCE = "```";
    /** A region marker line of a source: {@code // snippet:name}, {@code <!-- end:name -->}, ... */
    private static final Pattern REGION_MARKER = Pattern.compile("^(?://\\s*|<!--\\s*)(snippet|end):(\\S+?)(?:\\s*-->)?$");

    private SnippetText() {
    }

    /**
     * @param root the repository root (the folder with README.md)
     * @return one line per problem found, empty if every block matches its source
     */
    static List<String> check(Path root) throws IOException {
        List<String> problems = new ArrayList<>();
        for (Path doc : documents(root)) {
            checkDocument(root, doc, problems);
        }
        return problems;
    }

    /** @return the number of marked blocks in the documents, so a check that found none can say so */
    static int countMarked(Path root) throws IOException {
        int n = 0;
        for (Path doc : documents(root)) {
            for (String line : Files.readAllLines(doc, StandardCharsets.UTF_8)) {
                if (MARKER.matcher(line.trim()).matches()) {
                    n++;
                }
            }
        }
        return n;
    }

    /** @return README.md and every docs/*.md, in a stable order */
    static List<Path> documents(Path root) throws IOException {
        List<Path> docs = new ArrayList<>();
        docs.add(root.resolve("README.md"));
        Path dir = root.resolve("docs");
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.list(dir)) {
                files.filter(f -> f.getFileName().toString().endsWith(".md")).sorted().forEach(docs::add);
            }
        }
        return docs;
    }

    /**
     * @param start a folder inside the repository
     * @return the nearest folder at or above {@code start} that holds README.md and .ci
     */
    static Path findRoot(Path start) {
        for (Path p = start.toAbsolutePath().normalize(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("README.md")) && Files.isDirectory(p.resolve(".ci"))) {
                return p;
            }
        }
        throw new IllegalStateException("no repository root (README.md and .ci) at or above " + start.toAbsolutePath());
    }

    private static void checkDocument(Path root, Path doc, List<String> problems) throws IOException {
        List<String> lines = Files.readAllLines(doc, StandardCharsets.UTF_8);
        String name = root.relativize(doc).toString();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher marker = MARKER.matcher(line.trim());
            if (marker.matches()) {
                String where = name + ":" + (i + 1);
                if (i + 1 >= lines.size() || !lines.get(i + 1).startsWith(FENCE)) {
                    problems.add(where + ": a snippet comment must be followed at once by a code block");
                    continue;
                }
                int end = closingFence(lines, i + 2);
                if (end < 0) {
                    problems.add(where + ": the code block is not closed");
                    return;
                }
                List<String> block = lines.subList(i + 2, end);
                compare(where, block, root.resolve(marker.group(1)), marker.group(1), marker.group(2), problems);
                i = end;
            } else if (line.trim().equals(JAVA_FENCE)) {
                problems.add(name + ":" + (i + 1) + ": a java code block without a snippet comment above it"
                        + " (<!-- snippet: path/File.java#name -->); CI could not compile it");
                int end = closingFence(lines, i + 1);
                i = end < 0 ? lines.size() : end;
            } else if (line.trim().startsWith(FENCE)) {
                int end = closingFence(lines, i + 1);
                i = end < 0 ? lines.size() : end;
            }
        }
    }

    private static int closingFence(List<String> lines, int from) {
        for (int j = from; j < lines.size(); j++) {
            if (lines.get(j).trim().equals(FENCE)) {
                return j;
            }
        }
        return -1;
    }

    private static void compare(String where, List<String> block, Path source, String sourceName, String region,
            List<String> problems) throws IOException {
        if (!Files.isRegularFile(source)) {
            problems.add(where + ": no file " + sourceName);
            return;
        }
        List<String> expected;
        try {
            expected = region(Files.readAllLines(source, StandardCharsets.UTF_8), region);
        } catch (IllegalArgumentException e) {
            problems.add(where + ": " + sourceName + ": " + e.getMessage());
            return;
        }
        int n = Math.max(expected.size(), block.size());
        for (int k = 0; k < n; k++) {
            String want = k < expected.size() ? stripTrailing(expected.get(k)) : "<end of region>";
            String got = k < block.size() ? stripTrailing(block.get(k)) : "<end of block>";
            if (!want.equals(got)) {
                problems.add(where + ": block differs from " + sourceName + "#" + region + " at its line " + (k + 1)
                        + "\n    source: " + want + "\n    doc:    " + got);
                return;
            }
        }
    }

    /**
     * @return the lines between {@code // snippet:name} and {@code // end:name}, with the
     *     indentation they all share removed
     * @throws IllegalArgumentException if the region is missing or not closed
     */
    static List<String> region(List<String> source, String name) {
        int start = -1;
        for (int i = 0; i < source.size(); i++) {
            Matcher marker = REGION_MARKER.matcher(source.get(i).trim());
            if (!marker.matches() || !marker.group(2).equals(name)) {
                continue;
            }
            if (marker.group(1).equals("snippet")) {
                start = i + 1;
            } else {
                if (start < 0) {
                    throw new IllegalArgumentException("end:" + name + " before snippet:" + name);
                }
                List<String> lines = new ArrayList<>();
                for (String line : source.subList(start, i)) {
                    if (!REGION_MARKER.matcher(line.trim()).matches()) {
                        lines.add(line);
                    }
                }
                return dedent(lines);
            }
        }
        throw new IllegalArgumentException(start < 0 ? "no region snippet:" + name : "region " + name + " is not closed");
    }

    private static List<String> dedent(List<String> lines) {
        int indent = Integer.MAX_VALUE;
        for (String l : lines) {
            if (!l.isBlank()) {
                indent = Math.min(indent, l.length() - l.stripLeading().length());
            }
        }
        List<String> out = new ArrayList<>(lines.size());
        for (String l : lines) {
            out.add(l.isBlank() ? "" : l.substring(indent));
        }
        return out;
    }

    private static String stripTrailing(String s) {
        return s.stripTrailing();
    }
}
