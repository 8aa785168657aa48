package io.zkcoord.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zkcoord.ZkClient;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The API boundary, enforced. ZooKeeper 3.9 cannot be required from a {@code module-info.java}
 * (its two jars, {@code zookeeper} and {@code zookeeper-jute}, split the packages {@code
 * org.apache.zookeeper.server.quorum} and {@code ...server.persistence}, which the module system
 * refuses), so the boundary is kept by this test instead: no public or protected member of a public
 * type in an API package mentions a type of an internal package, in any signature position.
 */
class ApiBoundaryTest {

    /** The packages users program against. */
    static final Set<String> API = Set.of("io.zkcoord", "io.zkcoord.lock", "io.zkcoord.retry", "io.zkcoord.time",
            "io.zkcoord.semaphore", "io.zkcoord.election", "io.zkcoord.observe", "io.zkcoord.inspect",
            "io.zkcoord.group", "io.zkcoord.shard", "io.zkcoord.cache", "io.zkcoord.value", "io.zkcoord.barrier");
    /** The packages that are not API: the queue core, the bridge from the client to it, the session machinery. */
    static final Set<String> INTERNAL = Set.of("io.zkcoord.queue", "io.zkcoord.internal", "io.zkcoord.once",
            "io.zkcoord.session");

    /** Every main class lives in an API package or an internal one: a new package must be classified here. */
    @Test
    void everyPackageIsClassified() throws Exception {
        Set<String> packages = new TreeSet<>();
        for (Class<?> c : mainClasses()) {
            packages.add(c.getPackageName());
        }
        Set<String> unknown = new TreeSet<>(packages);
        unknown.removeAll(API);
        unknown.removeAll(INTERNAL);
        assertEquals(Set.of(), unknown, "classify these packages as API or internal");
        assertTrue(packages.containsAll(INTERNAL), "the internal packages exist: " + packages);
    }

    /** No public signature of the API (supertypes, fields, constructors, methods, exceptions) exposes an internal type. */
    @Test
    void apiSignaturesExposeNoInternalType() throws Exception {
        List<String> leaks = new ArrayList<>();
        for (Class<?> c : mainClasses()) {
            if (!API.contains(c.getPackageName()) || !isVisible(c)) {
                continue;
            }
            check(c.getName() + " extends", c.getGenericSuperclass(), leaks);
            for (Type t : c.getGenericInterfaces()) {
                check(c.getName() + " implements", t, leaks);
            }
            for (Field f : c.getDeclaredFields()) {
                if (visible(f)) {
                    check(c.getName() + "." + f.getName(), f.getGenericType(), leaks);
                }
            }
            List<Executable> executables = new ArrayList<>(List.of(c.getDeclaredMethods()));
            executables.addAll(List.<Constructor<?>>of(c.getDeclaredConstructors()));
            for (Executable e : executables) {
                if (!visible(e) || (e instanceof Method m && m.isSynthetic())) {
                    continue;
                }
                String where = c.getName() + "." + e.getName();
                if (e instanceof Method m) {
                    check(where + " returns", m.getGenericReturnType(), leaks);
                }
                for (Type t : e.getGenericParameterTypes()) {
                    check(where + " takes", t, leaks);
                }
                for (Type t : e.getGenericExceptionTypes()) {
                    check(where + " throws", t, leaks);
                }
            }
        }
        assertEquals(List.of(), leaks);
    }

    private static boolean isVisible(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getDeclaringClass()) {
            if (!Modifier.isPublic(k.getModifiers()) && !Modifier.isProtected(k.getModifiers())) {
                return false;
            }
        }
        return true;
    }

    private static boolean visible(Member m) {
        int mod = m.getModifiers();
        return Modifier.isPublic(mod) || (Modifier.isProtected(mod) && !Modifier.isFinal(m.getDeclaringClass().getModifiers()));
    }

    private static void check(String where, Type type, List<String> leaks) {
        if (type == null) {
            return;
        }
        if (type instanceof Class<?> c) {
            Class<?> base = c;
            while (base.isArray()) {
                base = base.getComponentType();
            }
            if (!base.isPrimitive() && INTERNAL.contains(base.getPackageName())) {
                leaks.add(where + " " + base.getName());
            }
        } else if (type instanceof ParameterizedType p) {
            check(where, p.getRawType(), leaks);
            for (Type a : p.getActualTypeArguments()) {
                check(where, a, leaks);
            }
        } else if (type instanceof GenericArrayType g) {
            check(where, g.getGenericComponentType(), leaks);
        } else if (type instanceof WildcardType w) {
            for (Type b : w.getUpperBounds()) {
                check(where, b, leaks);
            }
            for (Type b : w.getLowerBounds()) {
                check(where, b, leaks);
            }
        } else if (type instanceof TypeVariable<?> v) {
            for (Type b : v.getBounds()) {
                check(where, b, leaks);
            }
        }
    }

    /** @return every class compiled from src/main, loaded without initialising it */
    private static List<Class<?>> mainClasses() throws IOException, URISyntaxException, ClassNotFoundException {
        Path root = Path.of(ZkClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<Class<?>> classes = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
                String name = root.relativize(f).toString().replace('/', '.').replace('\\', '.');
                name = name.substring(0, name.length() - ".class".length());
                if (name.endsWith("module-info") || name.endsWith("package-info")) {
                    continue;
                }
                classes.add(Class.forName(name, false, ApiBoundaryTest.class.getClassLoader()));
            }
        }
        assertTrue(classes.size() > 20, "found the main classes under " + root);
        return classes;
    }
}
