/**
 * Issue 40 item 6's experiment: the least an upstream client on Bun's TCP sockets could cost, to
 * see whether one would lower the runtime's floor under the proxy. An HTTP/1.1 client with a
 * keep-alive pool per origin (Bun.connect; `tls: true` for https), a request body given whole,
 * answers framed by Content-Length or chunked and handed back as a `Response` like fetch's. It is
 * the cheap end of such a client: no streamed request bodies, no time-outs, no retries of a
 * request that met a connection closed while idle. Those would only add to its cost, so if even
 * this is not clearly cheaper than fetch per call, a complete client is not worth building.
 */
import type { Socket } from "bun";

interface Pending {
  resolve(response: Response): void;
  reject(error: Error): void;
}

/** One connection: at most one call on it at a time, its answer parsed as bytes arrive. */
class Connection {
  socket: Socket<Connection> | null = null;
  pending: Pending | null = null;
  private buffer: Buffer | null = null;
  private head: { status: number; headers: Headers; length: number; chunked: boolean; bodyAt: number } | null = null;
  private queued: Uint8Array | null = null;

  constructor(private readonly pool: Pool) {}

  send(bytes: Uint8Array, pending: Pending): void {
    this.pending = pending;
    this.write(bytes);
  }

  /** Writes what the socket takes now; the rest waits for drain (the socket's backpressure). */
  write(bytes: Uint8Array): void {
    const written = this.socket!.write(bytes);
    this.queued = written < bytes.length ? bytes.subarray(Math.max(written, 0)) : null;
  }

  drain(): void {
    if (this.queued) this.write(this.queued);
  }

  data(chunk: Buffer): void {
    this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
    if (!this.head && !this.parseHead()) return;
    const head = this.head!;
    const body = head.chunked ? dechunk(this.buffer, head.bodyAt) : whole(this.buffer, head.bodyAt, head.length);
    if (!body) return;
    const pending = this.pending!;
    this.pending = null;
    this.buffer = null;
    this.head = null;
    this.pool.release(this);
    pending.resolve(new Response(body as Uint8Array<ArrayBuffer>, { status: head.status, headers: head.headers }));
  }

  /** The status line and headers, once all of them are in. */
  private parseHead(): boolean {
    const end = this.buffer!.indexOf("\r\n\r\n");
    if (end < 0) return false;
    const lines = this.buffer!.toString("latin1", 0, end).split("\r\n");
    const headers = new Headers();
    let length = 0;
    let chunked = false;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === "content-length") length = Number(value);
      else if (name === "transfer-encoding") chunked = value.toLowerCase().includes("chunked");
      else if (name !== "connection" && name !== "keep-alive") headers.append(name, value);
    }
    this.head = { status: Number(lines[0]!.slice(9, 12)), headers, length, chunked, bodyAt: end + 4 };
    return true;
  }

  fail(error: Error): void {
    this.pool.forget(this);
    const pending = this.pending;
    this.pending = null;
    pending?.reject(error);
  }
}

const whole = (buffer: Buffer, at: number, length: number) =>
  buffer.length - at >= length ? buffer.subarray(at, at + length) : null;

/** A chunked body's bytes, or null until its last chunk has arrived. */
function dechunk(buffer: Buffer, at: number): Buffer | null {
  const parts: Buffer[] = [];
  for (let i = at; ; ) {
    const eol = buffer.indexOf("\r\n", i);
    if (eol < 0) return null;
    const size = Number.parseInt(buffer.toString("latin1", i, eol), 16);
    if (size === 0) return buffer.indexOf("\r\n\r\n", eol) >= 0 ? Buffer.concat(parts) : null;
    if (buffer.length < eol + 2 + size + 2) return null;
    parts.push(buffer.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
}

/** The idle connections to one origin. */
class Pool {
  private readonly idle: Connection[] = [];
  readonly hostHeader: string;

  constructor(private readonly origin: URL) {
    this.hostHeader = origin.host;
  }

  async acquire(): Promise<Connection> {
    const idle = this.idle.pop();
    if (idle) return idle;
    const connection = new Connection(this);
    const secure = this.origin.protocol === "https:";
    connection.socket = await Bun.connect<Connection>({
      hostname: this.origin.hostname,
      port: Number(this.origin.port || (secure ? 443 : 80)),
      tls: secure,
      data: connection,
      socket: {
        data: (socket, chunk) => socket.data.data(chunk),
        drain: (socket) => socket.data.drain(),
        close: (socket) => socket.data.fail(new TypeError("upstream closed the connection")),
        error: (socket, error) => socket.data.fail(new TypeError(error.message)),
      },
    });
    return connection;
  }

  release(connection: Connection): void {
    this.idle.push(connection);
  }

  forget(connection: Connection): void {
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
  }
}

const pools = new Map<string, Pool>();
const encoder = new TextEncoder();

/**
 * fetch's shape for what the bare pass-through sends: a method, headers, and a body given whole
 * (or none). The answer's body is read whole before the Response is made.
 */
export async function socketFetch(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: ArrayBuffer | Uint8Array | string | null },
): Promise<Response> {
  const target = new URL(url);
  let pool = pools.get(target.origin);
  if (!pool) {
    pool = new Pool(target);
    pools.set(target.origin, pool);
  }
  const body =
    init.body == null
      ? new Uint8Array(0)
      : typeof init.body === "string"
        ? encoder.encode(init.body)
        : new Uint8Array(init.body);
  let head = `${init.method ?? "GET"} ${target.pathname}${target.search} HTTP/1.1\r\nhost: ${pool.hostHeader}\r\n`;
  for (const [name, value] of Object.entries(init.headers ?? {})) head += `${name}: ${value}\r\n`;
  head += `content-length: ${body.length}\r\n\r\n`;
  const headBytes = encoder.encode(head);
  const bytes = new Uint8Array(headBytes.length + body.length);
  bytes.set(headBytes);
  bytes.set(body, headBytes.length);
  const connection = await pool.acquire();
  return new Promise((resolve, reject) => connection.send(bytes, { resolve, reject }));
}
