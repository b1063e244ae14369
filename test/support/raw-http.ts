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
  return { status: Number(statusLine!.split(" ")[1]), headers, body: rest.subarray(0, length ?? rest.length).toString("utf8") };
}

/**
 * Sends `head` (request line and headers, without the blank line) and then `body` on a fresh
 * connection, and reads one response: for requests fetch will not send, such as a Content-Length
 * that promises more than is sent. The connection is closed once the response is complete.
 */
export function rawRequest(url: string, head: string, body: Uint8Array | string = ""): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const tryParse = (final: boolean): boolean => {
      const response = parseResponse(received, final);
      if (response) resolve(response);
      return response !== null;
    };
    void Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        open(socket) {
          socket.write(`${head}\r\n\r\n`);
          if (body.length > 0) socket.write(body);
        },
        data(socket, chunk) {
          received = Buffer.concat([received, chunk]);
          if (tryParse(false)) socket.end();
        },
        close() {
          if (!tryParse(true)) reject(new Error(`connection closed after ${received.length} bytes`));
        },
        error(_socket, error) {
          reject(error);
        },
      },
    }).catch(reject);
  });
}

/**
 * Sends `head` and then a body that never ends: one byte every `everyMs`, for as long as the
 * connection is open. Resolves with the answer once the server has closed the connection, and
 * how many body bytes were written by then.
 */
export function trickleRequest(url: string, head: string, everyMs: number): Promise<RawResponse & { bytesSent: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    let bytesSent = 0;
    let drip: Timer | undefined;
    void Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        open(socket) {
          socket.write(`${head}\r\n\r\n`);
          drip = setInterval(() => (bytesSent += socket.write("a")), everyMs);
        },
        data(_socket, chunk) {
          received = Buffer.concat([received, chunk]);
        },
        close() {
          clearInterval(drip);
          const response = parseResponse(received, true);
          if (response) resolve({ ...response, bytesSent });
          else reject(new Error(`connection closed after ${received.length} bytes without an answer`));
        },
        error(_socket, error) {
          clearInterval(drip);
          reject(error);
        },
      },
    }).catch(reject);
  });
}
