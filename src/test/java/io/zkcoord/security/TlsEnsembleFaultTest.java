package io.zkcoord.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.faults.FaultFixtures;
import io.zkcoord.testing.Await;
import io.zkcoord.testing.SessionExpiry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ClientInfo;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The recipes over mutual TLS on a three-server ensemble ({@link SecureEnsemble#shared}), through a
 * session expiry and a leader kill: four clients, each given the three servers' TLS ports only,
 * use a mutex, a read/write lock, a semaphore and an election at once ({@link RecipeWorkload})
 * while one holder's session is expired on the server and then the ensemble's leader process is
 * killed with SIGKILL. No invariant breaks, every recipe grants again after each fault, the
 * expired client works again in a new session, and every session, the rebuilt one included, is
 * on TLS.
 */
@ExtendWith(SecretsInLogs.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES) // a safety net only: every wait below has its own deadline
class TlsEnsembleFaultTest {

    private static final Logger log = LoggerFactory.getLogger(TlsEnsembleFaultTest.class);

    private static final int CLIENTS = 4;
    /** Long enough for sessions to ride out an election (the servers tick every 500 ms). */
    private static final Duration SESSION = Duration.ofSeconds(10);
    /** How long any one step may take on a busy machine before the test gives up on it. */
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Grants of each lock and the semaphore before the first fault: all of them are at work. */
    private static final int WARM_UP_GRANTS = 3;
    /** The recipes in the order of {@link RecipeWorkload#progress()}. */
    private static final List<String> RECIPES = List.of("mutex", "read/write lock", "semaphore", "election");
    /** The election grants once per leadership, not per cycle: it is awaited on its own. */
    private static final int LOCKS = 3;

    private static TestCertificates certs;
    private static SecureEnsemble ensemble;

    @BeforeAll
    static void startEnsemble() throws Exception {
        long t0 = System.nanoTime();
        certs = TestCertificates.get(); // made once per JVM: free if another TLS test made them
        long t1 = System.nanoTime();
        ensemble = SecureEnsemble.shared(certs, WAIT); // shared with TlsNoQuorumTest: started, or restored
        log.info("MEASURED TLS ensemble: certificates {} ms, 3 servers serving in quorum after {} ms",
                TimeUnit.NANOSECONDS.toMillis(t1 - t0), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t1));
    }


    private static ZkClient tlsClient() {
        return ZkClient.builder()
                .connectString(ensemble.secureConnectString()) // the TLS ports only
                .clientConfig(TlsSettings.client(certs.trustStore, certs.aliceKeyStore)) // host names verified
                .sessionTimeout(SESSION)
                .connectionTimeout(Duration.ofSeconds(30))
                .retryPolicy(FaultFixtures.PATIENT)
                .build();
    }

    /**
     * A mutex, a read/write lock, a semaphore and an election on four TLS clients of a three-server
     * ensemble. First the session of the client whose participant leads is expired on the server
     * (a holder's session): every recipe grants again, a higher epoch leads, and that client
     * reports LOST, makes a new session and is granted again in it. Then the ensemble's leader
     * process is SIGKILLed: the two others elect a leader and every recipe grants again. No two
     * exclusive holders and no two leaders at once (unless one was reported lost), never more
     * leases than permits, fencing tokens and epochs accepted by fenced resources only in
     * increasing order, one participant per epoch, no node left, and every session on TLS before
     * and after the faults.
     */
    @Test
    void recipesRideOutASessionExpiryAndALeaderKillOverTls() throws Exception {
        List<ZkClient> clients = new ArrayList<>();
        ZooKeeper control = null;
        RecipeWorkload work = null;
        try {
            for (int i = 0; i < CLIENTS; i++) {
                clients.add(tlsClient());
            }
            control = plainControlSession();
            assertAllOnTls(clients, control, "before the faults");
            long seed = System.nanoTime();
            log.info("TLS ensemble: seed {}, servers {}", seed, SecureEnsemble.describe(ensemble.servers()));
            work = new RecipeWorkload(clients, seed);
            work.start();
            awaitGrantsAfter(work, new int[RECIPES.size()], WARM_UP_GRANTS, "before the faults");

            // 1. A holder's session ends on the server: the client whose participant leads also takes
            // the mutex with a lease, so its session holds a leadership and an exclusive lock.
            RecipeWorkload w = work;
            Await.until("a participant leads", WAIT, () -> w.leader() >= 0);
            int victim = work.leader();
            ZkClient expired = clients.get(victim);
            long oldEpoch = work.epoch(victim);
            RecipeWorkload.LeaseHold held = work.holdMutex(victim);
            long acceptedBefore = work.mutex.acceptedWrites();
            long oldSession = expired.zooKeeper().getSessionId();
            int[] beforeExpiry = work.progress();
            long expiredAt = System.nanoTime();
            work.fault("session of client-" + victim + " (leading with epoch " + oldEpoch + ", holding the mutex with"
                    + " token " + held.entry().token() + ") expired on the server");
            // Through the plain port: the session is the ensemble's, whichever port it came through.
            SessionExpiry.expireOnServer(expired.zooKeeper(), ensemble.plainConnectString(), WAIT);
            work.states(victim).await(ConnectionState.LOST, expiredAt, WAIT);
            Await.until("client-" + victim + " in a new session", WAIT, () -> expired.state().isConnected()
                    && expired.zooKeeper().getSessionId() != oldSession);
            int victimGrants = work.grants(victim);
            awaitGrantsAfter(work, beforeExpiry, 1, "after the expiry");
            Await.until("a new leadership after the expiry", WAIT,
                    () -> w.progress()[LOCKS] > beforeExpiry[LOCKS]);
            Await.until("client-" + victim + " granted again in its new session", WAIT,
                    () -> w.grants(victim) > victimGrants);
            Await.until("a participant leads with an epoch above the expired one's " + oldEpoch, WAIT,
                    () -> w.highestEpoch() > oldEpoch && w.leader() >= 0);
            // The expired lease: told lost, and its late write, after the next holder's, refused.
            Await.until("the expired lease told lost", WAIT, () -> w.mutex.lossReported(held.entry().token()));
            assertFalse(held.lease().isValid(), "the expired lease is not valid");
            Await.until("the next holder of the mutex wrote", WAIT, () -> w.mutex.acceptedWrites() > acceptedBefore);
            assertFalse(work.mutex.write(held.entry()), "the fenced resource refuses the expired holder's token");
            work.mutex.leave(held.entry());
            held.lease().release();
            log.info("MEASURED TLS ensemble: after the expiry {}", Arrays.toString(work.progress()));

            // 2. The ensemble's leader process dies. The clients keep their sessions if they reconnect
            // within the session timeout, and a leading participant its epoch: the election need not
            // grant anew, but one participant must lead.
            Await.until("a server leads", WAIT, () -> ensemble.leader().isPresent());
            SecureServer leader = ensemble.leader().orElseThrow();
            int[] beforeKill = work.progress();
            long killedAt = System.nanoTime();
            work.fault("ensemble leader s" + leader.id + " killed (SIGKILL)");
            leader.kill();
            SecureServer next = ensemble.awaitQuorum(ensemble.running(), WAIT);
            log.info("MEASURED TLS ensemble: s{} leads {} ms after s{} was killed", next.id,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt), leader.id);
            awaitGrantsAfter(work, beforeKill, 1, "after the leader kill");
            Await.until("every client connected and a participant leading", WAIT,
                    () -> clients.stream().allMatch(c -> c.state().isConnected()) && w.leader() >= 0);
            log.info("MEASURED TLS ensemble: after the leader kill {} ({} ms after it)", Arrays.toString(work.progress()),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt));

            work.stop(WAIT);
            assertAllOnTls(clients, control, "after the faults");
            assertNotEquals(oldSession, expired.zooKeeper().getSessionId(), "the expired client is in a new session");
            work.assertNoViolations();
            for (SecureServer s : ensemble.servers()) {
                SecretsInLogs.assertClean("the log of server s" + s.id, s.log());
            }
            log.info("REPORT TLS ensemble: 0 violations; grants {} of {}; failures excused by a lost session {}",
                    Arrays.toString(work.progress()), RECIPES, work.tolerated());
        } finally {
            if (work != null) {
                work.abandon();
            }
            clients.forEach(ZkClient::close);
            if (control != null) {
                control.close();
            }
        }
    }

    /** Waits until the locks and the semaphore have each granted at least {@code more} times since {@code before}. */
    private static void awaitGrantsAfter(RecipeWorkload work, int[] before, int more, String when) {
        Await.until(WAIT, () -> {
            int[] now = work.progress();
            for (int r = 0; r < LOCKS; r++) {
                if (now[r] < before[r] + more) {
                    return false;
                }
            }
            return true;
        }, () -> "every recipe granted " + when + ": " + RECIPES + " " + Arrays.toString(before) + " -> "
                + Arrays.toString(work.progress()) + "; " + SecureEnsemble.describe(ensemble.servers()));
    }

    /**
     * A session on the plain-text ports, to show that the servers' {@code cons} does list a session
     * connected there: the look of {@link #assertAllOnTls} can see one.
     */
    private static ZooKeeper plainControlSession() throws Exception {
        ZooKeeper zk = new ZooKeeper(ensemble.plainConnectString(), (int) SESSION.toMillis(), event -> { });
        Await.until("the plain-text control session connected", WAIT, () -> zk.getState().isConnected());
        return zk;
    }

    /**
     * Every client's session is on a TLS connection, shown two ways; a session that went through a
     * plain-text port would fail both:
     * <ol>
     *   <li>the server names the session's connection by the client certificate ({@code whoAmI}
     *       lists {@code x509} alice): ZooKeeper gives a connection that identity from its TLS
     *       handshake only, and authentication belongs to the connection, not the session;
     *   <li>no running server lists the session among the connections of its plain-text port
     *       ({@code cons} answers for the port it is sent to), while the control session, opened
     *       on a plain port, is listed there.
     * </ol>
     */
    private static void assertAllOnTls(List<ZkClient> clients, ZooKeeper control, String when) {
        // One look at every plain port: the one that lists the control session is the one checked.
        AtomicReference<Set<Long>> look = new AtomicReference<>();
        Await.until("the plain-text control session listed on a plain port " + when, WAIT, () -> {
            try {
                look.set(ensemble.plainSessions());
                return look.get().contains(control.getSessionId());
            } catch (RuntimeException e) {
                return false; // a server not answering cons now
            }
        });
        Set<Long> plain = look.get();
        for (int i = 0; i < clients.size(); i++) {
            ZkClient c = clients.get(i);
            AtomicReference<List<String>> x509 = new AtomicReference<>();
            Await.until("whoAmI of client-" + i + " " + when, WAIT, () -> {
                x509.set(x509Ids(c.zooKeeper()));
                return x509.get() != null;
            });
            assertEquals(List.of(TestCertificates.ALICE_DN), x509.get(),
                    "client-" + i + "'s connection " + when + " carries its certificate: TLS");
            long session = c.zooKeeper().getSessionId();
            assertFalse(plain.contains(session), "client-" + i + "'s session 0x" + Long.toHexString(session) + " "
                    + when + " is on a plain-text port; plain sessions "
                    + plain.stream().map(Long::toHexString).toList());
        }
    }

    /** @return the x509 identities of {@code zk}'s connection, or null if it cannot answer now (reconnecting) */
    private static List<String> x509Ids(ZooKeeper zk) {
        try {
            List<ClientInfo> infos = zk.whoAmI(); // null when the request failed (connection loss)
            if (infos == null) {
                return null;
            }
            List<String> ids = new ArrayList<>();
            for (ClientInfo info : infos) {
                if (info.getAuthScheme().equals("x509")) {
                    ids.add(info.getUser());
                }
            }
            return ids;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
