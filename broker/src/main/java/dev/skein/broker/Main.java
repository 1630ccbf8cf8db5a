package dev.skein.broker;

public final class Main {
    public static void main(String[] args) {
    }
}
