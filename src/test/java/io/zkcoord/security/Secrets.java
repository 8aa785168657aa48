package io.zkcoord.security;

import java.util.List;

/**
 * Every password and credential the security tests use, in one place, so that {@code
 * SecretsStaySecretTest} can search everything logged, every message and every {@code toString()}
 * for them. Each is long and distinctive: a match is never a coincidence.
 */
final class Secrets {

    static final String ALICE_PASSWORD = "alice-pw-7Qx2vLm9Kd";
    static final String BOB_PASSWORD = "bob-pw-3Hn8Wz5Tq1";
    static final String SASL_PASSWORD = "sasl-pw-9Fr4Yb6Uc2";
    static final String KEYSTORE_PASSWORD = "ks-pw-5Mj7Pe2Xa8";
    static final String TRUSTSTORE_PASSWORD = "ts-pw-8Gd3Nk6Vy4";

    static List<String> all() {
        return List.of(ALICE_PASSWORD, BOB_PASSWORD, SASL_PASSWORD, KEYSTORE_PASSWORD, TRUSTSTORE_PASSWORD);
    }

    private Secrets() {
    }
}
