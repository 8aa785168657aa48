package io.zkcoord.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Turns off {@link ZkEnsembleExtension}'s check for leftovers (watchers in the ensemble's clients, clients a
 * test built and did not close) for one test method, or for every test of a class. The test's clients are
 * still closed after it.
 */
@Documented
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
public @interface SkipLeakCheck {

    /**
     * Why the test leaves something behind on purpose; for the reader.
     *
     * @return the reason, empty by default
     */
    String value() default "";
}
