// Loopback ports for tests of servers; not a test file itself.
import net from "node:net";

/** A port nothing listens on now (the OS picks it; released before use). */
export async function freePort(): Promise<number> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
}

/** Holds a port busy, as another program would. */
export async function occupy(port: number): Promise<net.Server> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    return server;
}
