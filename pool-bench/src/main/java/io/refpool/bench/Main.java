package io.refpool.bench;

public final class Main {
    private Main() {}

    public static void main(String[] args) {
        System.out.println("refpool bench");
    }
}
