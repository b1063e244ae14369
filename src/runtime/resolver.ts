import { lookup } from "node:dns/promises";

/** Resolves a hostname to every address it has. Injected so SSRF checks are tested without DNS. */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => a.address);
};

/** A resolver answering from a fixed table; unknown names fail as DNS would. */
export function staticResolver(table: Record<string, string[]>): Resolver {
  return async (hostname) => {
    const found = table[hostname.toLowerCase()];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return found;
  };
}
