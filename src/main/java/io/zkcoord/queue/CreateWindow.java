package io.zkcoord.queue;

final class CreateWindow {
    static final int SIZE = 32;
}
