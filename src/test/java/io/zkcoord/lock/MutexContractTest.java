package io.zkcoord.lock;

import io.zkcoord.ZkClient;

/** The {@link ZkLock} contract for {@link ZkMutex}: blockers and contenders are other mutexes. */
class MutexContractTest extends LockContractTest {

    @Override
    protected ZkLock newLock(ZkClient client, String path) {
        return new ZkMutex(client, path);
    }

    @Override
    protected String lockName() {
        return "mutex";
    }

    @Override
    protected ZkLock newBlocker(ZkClient client, String path) {
        return new ZkMutex(client, path);
    }

    @Override
    protected LockPair newPairOnOneObject(ZkClient client, String path) {
        ZkMutex mutex = new ZkMutex(client, path);
        return new LockPair(mutex, mutex);
    }
}
