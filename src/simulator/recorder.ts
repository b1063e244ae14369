import { rawTarget } from "../http/raw-target.ts";

/** One request as the simulator received it, for tests to assert on. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** The raw query string without `?`, exactly as sent. */
  query: string;
  headers: Record<string, string>;
  /** The first `keepBytes` bytes of the body (all of it unless it was larger). */
  body: Uint8Array<ArrayBuffer>;
  bodyLength: number;
  /** Hex SHA-256 of the whole body, so large uploads can be compared without keeping them. */
  bodySha256: string;
}

/** A Headers object as a plain record (lower-case names). */
export function headerRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** Reads a request body as it streams: hashes and counts all of it, keeps its first bytes. */
export async function recordRequest(request: Request, keepBytes: number): Promise<RecordedRequest> {
  const { path, query } = rawTarget(request.url);
  const hasher = new Bun.CryptoHasher("sha256");
  const kept: Uint8Array[] = [];
  let keptLength = 0;
  let length = 0;
  const reader = request.body?.getReader();
  while (reader) {
    const { done, value: chunk } = await reader.read();
    if (done) break;
    hasher.update(chunk);
    length += chunk.byteLength;
    if (keptLength < keepBytes) {
      const part = chunk.subarray(0, keepBytes - keptLength);
      kept.push(part.slice());
      keptLength += part.byteLength;
    }
  }
  return {
    method: request.method,
    path,
    query: query ?? "",
    headers: headerRecord(request.headers),
    body: new Uint8Array(Buffer.concat(kept)),
    bodyLength: length,
    bodySha256: hasher.digest("hex"),
  };
}
