package io.zkcoord.testing;

/** One server's address as a connect string names it: {@code host:port}. */
record HostPort(String host, int port) {

    /**
     * @param hostPort one {@code host:port} (for instance {@code TestingServer.getConnectString()})
     * @throws IllegalArgumentException for null, several servers, a chroot, or no port
     */
    static HostPort parse(String hostPort) {
        if (hostPort == null || hostPort.contains(",") || hostPort.contains("/")) {
            throw new IllegalArgumentException("expected one host:port, got " + hostPort);
        }
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("expected host:port, got " + hostPort);
        }
        return new HostPort(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }
}
