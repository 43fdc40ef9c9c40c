/**
 * A TCP forwarder on 127.0.0.1 that a test can cut and restore: a stand-in
 * for a network path to one server (a replica's route to PostgreSQL). Cut,
 * it stops listening and destroys every connection it carries (new ones are
 * refused); restored, it listens again on the same port.
 */
import net from "node:net";

export interface TcpForward {
  port: number;
  /** Connections it has carried so far. */
  carried(): number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpForward(target: { host: string; port: number }): Promise<TcpForward> {
  const open = new Set<net.Socket>();
  let carried = 0;
  const server = net.createServer((client) => {
    carried += 1;
    const upstream = net.connect(target.port, target.host);
    open.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: "127.0.0.1", port, exclusive: true }, () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  const cut = async () => {
    const closed = stopListening();
    for (const socket of open) socket.destroy();
    await closed;
  };
  return {
    port,
    carried: () => carried,
    cut,
    restore: () => listen(port),
    close: cut,
  };
}
