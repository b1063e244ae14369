/**
 * The path and query of a request URL exactly as the client wrote them: `new URL()` would resolve
 * dot segments and re-encode characters, and a proxy must neither judge nor forward a cleaned-up
 * version of what it was sent.
 */
export interface RawTarget {
  path: string;
  query: string | null;
}

export function rawTarget(url: string): RawTarget {
  const hostStart = url.indexOf("//");
  const pathStart = url.indexOf("/", hostStart < 0 ? 0 : hostStart + 2);
  if (pathStart < 0) return { path: "/", query: null };
  const q = url.indexOf("?", pathStart);
  const end = url.indexOf("#", pathStart);
  const stop = end < 0 ? url.length : end;
  if (q < 0 || q > stop) return { path: url.slice(pathStart, stop), query: null };
  return { path: url.slice(pathStart, q), query: url.slice(q + 1, stop) };
}
