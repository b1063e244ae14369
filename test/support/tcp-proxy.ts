import type { Socket, TCPSocketListener } from "bun";

/**
 * A TCP relay on a loopback port to another address, that a test can cut (the port refuses
 * connections and every open one is dropped, as when a database server goes away) and restore
 * on the same port, or stall (connections stay up but nothing gets through, as when a server hangs).
 */
export interface TcpProxy {
  port: number;
  /** Drops every connection and stops accepting new ones. */
  cut(): void;
  /** Accepts again, on the same port, and passes data again. */
  restore(): void;
  /** Keeps every connection but passes nothing more to the target. */
  stall(): void;
  stop(): void;
}

type Pair = { client: Socket<Side>; upstream: Socket<Side> | null; pending: Uint8Array[] };
type Side = { pair: Pair };

export function startTcpProxy(target: { host: string; port: number }): TcpProxy {
  const pairs = new Set<Pair>();
  let listener: TCPSocketListener<Side> | null = null;
  let port = 0;
  let stalled = false;

  const listen = () => {
    listener = Bun.listen<Side>({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(client) {
          const pair: Pair = { client, upstream: null, pending: [] };
          client.data = { pair };
          pairs.add(pair);
          void Bun.connect<Side>({
            hostname: target.host,
            port: target.port,
            socket: {
              open(upstream) {
                upstream.data = { pair };
                pair.upstream = upstream;
                for (const chunk of pair.pending) upstream.write(chunk);
                pair.pending = [];
              },
              data(_upstream, chunk) {
                pair.client.write(chunk);
              },
              close() {
                pair.client.end();
                pairs.delete(pair);
              },
              error() {
                pair.client.end();
              },
            },
          }).catch(() => client.end());
        },
        data(client, chunk) {
          if (stalled) return;
          const pair = client.data.pair;
          if (pair.upstream) pair.upstream.write(chunk);
          else pair.pending.push(new Uint8Array(chunk));
        },
        close(client) {
          client.data.pair.upstream?.end();
          pairs.delete(client.data.pair);
        },
      },
    });
    port = listener.port;
  };
  listen();

  const cut = () => {
    listener?.stop(true);
    listener = null;
    for (const pair of pairs) {
      pair.client.terminate();
      pair.upstream?.terminate();
    }
    pairs.clear();
  };
  return {
    get port() {
      return port;
    },
    cut,
    restore() {
      stalled = false;
      if (!listener) listen();
    },
    stall() {
      stalled = true;
    },
    stop: cut,
  };
}
