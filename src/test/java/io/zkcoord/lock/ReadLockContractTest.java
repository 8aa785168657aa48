package io.zkcoord.lock;

import io.zkcoord.ZkClient;

/**
 * The {@link ZkLock} contract for the read side of {@link ZkReadWriteLock}. A read does not
 * exclude a read, so exclusion always comes from a partner: the blocker is a write lock on the
 * same path, and the tests of exclusion among locks of one kind are skipped (no contender).
 */
class ReadLockContractTest extends LockContractTest {

    @Override
    protected ZkLock newLock(ZkClient client, String path) {
        return new ZkReadWriteLock(client, path).readLock();
    }

    @Override
    protected String lockName() {
        return "read";
    }

    @Override
    protected ZkLock newBlocker(ZkClient client, String path) {
        return new ZkReadWriteLock(client, path).writeLock();
    }

    /** @return null: readers share */
    @Override
    protected ZkLock newContender(ZkClient client, String path) {
        return null;
    }

    /** The read and the write side of one {@link ZkReadWriteLock}. */
    @Override
    protected LockPair newPairOnOneObject(ZkClient client, String path) {
        ZkReadWriteLock rw = new ZkReadWriteLock(client, path);
        return new LockPair(rw.readLock(), rw.writeLock());
    }
}
