import { appsecretProof } from "../crypto/appsecret-proof.ts";
import type { Waba } from "../store/types.ts";

/**
 * `appsecret_proof` per WABA, computed once per token and secret rather than on every request.
 * A changed token or app secret (operator update, rotation) is noticed on the next request.
 */
export class ProofCache {
  private readonly proofs = new Map<string, { token: string; secret: string; proof: string }>();

  constructor(private readonly serviceAppSecret: string) {}

  for(waba: Pick<Waba, "wabaId" | "accessToken" | "appSecret">): string {
    const secret = waba.appSecret ?? this.serviceAppSecret;
    const cached = this.proofs.get(waba.wabaId);
    if (cached && cached.token === waba.accessToken && cached.secret === secret) return cached.proof;
    const proof = appsecretProof(waba.accessToken, secret);
    this.proofs.set(waba.wabaId, { token: waba.accessToken, secret, proof });
    return proof;
  }
}
