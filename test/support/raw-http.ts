/** A parsed HTTP/1.1 response read off a raw socket. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A response read off raw bytes, once its head and its declared length have arrived (or the connection ended). */
function parseResponse(received: Buffer, final: boolean): RawResponse | null {
  const end = received.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const [statusLine, ...lines] = received.subarray(0, end).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(":");
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const rest = received.subarray(end + 4);
  const length = headers["content-length"] === undefined ? null : Number(headers["content-length"]);
  if (length === null ? !final : rest.length < length) return null;
  return {
    status: Number(statusLine!.split(" ")[1]),
    headers,
    body: rest.subarray(0, length ?? rest.length).toString("utf8"),
  };
}

/**
 * Sends `head` (request line and headers, without the blank line) and then `body` on a fresh
 * connection, and reads one response: for requests fetch will not send, such as a Content-Length
 * that promises more than is sent. The connection is closed once the response is complete. With
 * `dripEveryMs`, one more body byte follows every `dripEveryMs` for as long as the connection is
 * open (a body that trickles in), and the answer is given once the server has closed it, with
 * `dripped`, how many such bytes were sent.
 */
export function rawRequest(
  url: string,
  head: string,
  body: Uint8Array | string = "",
  options: { dripEveryMs?: number } = {},
): Promise<RawResponse & { dripped: number }> {
  const { hostname, port } = new URL(url);
  const drip = options.dripEveryMs;
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    let dripped = 0;
    let dripping: Timer | undefined;
    const answered = (final: boolean): boolean => {
      const response = parseResponse(received, final);
      if (response) resolve({ ...response, dripped });
      return response !== null;
    };
    void Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        open(socket) {
          socket.write(`${head}\r\n\r\n`);
          if (body.length > 0) socket.write(body);
          if (drip !== undefined) dripping = setInterval(() => (dripped += socket.write("a")), drip);
        },
        data(socket, chunk) {
          received = Buffer.concat([received, chunk]);
          if (drip === undefined && answered(false)) socket.end();
        },
        close() {
          clearInterval(dripping);
          if (!answered(true)) reject(new Error(`connection closed after ${received.length} bytes without an answer`));
        },
        error(_socket, error) {
          clearInterval(dripping);
          reject(error);
        },
      },
    }).catch(reject);
  });
}

/**
 * A connection the test writes to piece by piece (a body that arrives as slowly as the test
 * says): `answer` is the first response, `closed` settles when the server has closed it.
 */
export async function rawConnection(url: string) {
  const { hostname, port } = new URL(url);
  let received = Buffer.alloc(0);
  const answer = Promise.withResolvers<RawResponse>();
  const closed = Promise.withResolvers<void>();
  let answered = false;
  const settle = (final: boolean) => {
    const response = answered ? null : parseResponse(received, final);
    if (response) {
      answered = true;
      answer.resolve(response);
    }
  };
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_socket, chunk) {
        received = Buffer.concat([received, chunk]);
        settle(false);
      },
      close() {
        settle(true);
        if (!answered) answer.reject(new Error(`connection closed after ${received.length} bytes without an answer`));
        closed.resolve();
      },
      error: (_socket, error) => answer.reject(error),
    },
  });
  return {
    write: (bytes: string | Uint8Array) => socket.write(bytes),
    answer: answer.promise,
    closed: closed.promise,
    end: () => socket.end(),
  };
}
