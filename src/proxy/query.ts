/** Caller parameters that carry upstream credentials: never forwarded (docs/proxy.md#what-goes-upstream). */
const STRIPPED = new Set(["access_token", "appsecret_proof"]);

/** A parameter's name as upstream will read it (percent-decoding, `+` as space). */
function decodedName(pair: string): string {
  const eq = pair.indexOf("=");
  const raw = (eq < 0 ? pair : pair.slice(0, eq)).replaceAll("+", " ");
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The query string sent upstream: the caller's, byte for byte and in order, minus its
 * `access_token` and `appsecret_proof` (however encoded), with our own proof appended.
 */
export function upstreamQuery(rawQuery: string | null, proof: string): string {
  const own = `appsecret_proof=${proof}`;
  if (!rawQuery) return own;
  const kept = rawQuery.split("&").filter((pair) => !STRIPPED.has(decodedName(pair)));
  return kept.length === 0 ? own : `${kept.join("&")}&${own}`;
}
