import { constantTimeEqual } from "../crypto/constant-time.ts";
import { appsecretProof } from "../crypto/appsecret-proof.ts";
import type { SimWaba, SimWorld } from "./world.ts";

export type AuthOutcome = { ok: true; waba: SimWaba | undefined } | { ok: false; code: 190 | 100; message: string };

/**
 * The platform's credential check: a bearer token it issued, whose WABA governs the object, and
 * (when required) an `appsecret_proof` made with that WABA's app secret. An object the token
 * cannot see is answered as if it did not exist, as upstream does.
 */
export function checkCredentials(
  world: SimWorld,
  authorization: string | undefined,
  params: URLSearchParams,
  targetId: string,
  requireProof: boolean,
): AuthOutcome {
  const token = authorization?.startsWith("Bearer ")
    ? authorization.slice("Bearer ".length)
    : params.get("access_token");
  if (!token) return { ok: false, code: 190, message: "An access token is required to request this resource." };
  const holder = [...world.wabas.values()].find((w) => constantTimeEqual(w.accessToken, token));
  if (!holder) return { ok: false, code: 190, message: "Invalid OAuth access token - Cannot parse access token" };
  const proof = params.get("appsecret_proof");
  if (proof === null && requireProof)
    return { ok: false, code: 100, message: "The appsecret_proof argument is required for this app." };
  if (proof !== null && !constantTimeEqual(proof, appsecretProof(token, holder.appSecret))) {
    return { ok: false, code: 100, message: "Invalid appsecret_proof provided in the API argument" };
  }
  const owner = world.wabaOf(targetId);
  return { ok: true, waba: owner && owner.wabaId === holder.wabaId ? owner : undefined };
}
