/**
 * Observing the recipes: {@link io.zkcoord.observe.CoordinationListener} sees every acquisition
 * (started, granted with its wait, ended without a hold), every hold (released or lost, with how
 * long it was held) and the session's state. Register one with {@code
 * ZkClient.addCoordinationListener}. The library also reports the same waits and holds as JDK Flight
 * Recorder events ({@code io.zkcoord.LockWait}, {@code io.zkcoord.LockHold}) whether or not a listener
 * is added; they cost nothing unless a recording is running. A Micrometer binding is a module of its
 * own ({@code micrometer/}).
 */
package io.zkcoord.observe;
