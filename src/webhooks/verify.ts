import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { safePost, type SafePostOptions } from "../net/safe-post.ts";
import { randomId } from "../runtime/random.ts";
import { mustEndpoint } from "./endpoints.ts";

export type VerifyDeps = Pick<Deps, "store" | "random" | "config"> & {
  client: Omit<SafePostOptions, "timeoutMs">;
};

/** What Verify found: whether the challenge came back, and what the receiver answered. */
export interface VerifyResult {
  verified: boolean;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
}

/**
 * Verify (docs/webhooks.md#verify): the platform's subscription check, `GET <url>?hub.mode=subscribe&
 * hub.verify_token=<the endpoint's token>&hub.challenge=<random>`, through the same address-safe
 * client as deliveries; verified when the receiver answers 200 with the challenge as its body.
 */
export async function verifyEndpoint(deps: VerifyDeps, accountId: string, id: string): Promise<VerifyResult> {
  const endpoint = await mustEndpoint(deps, accountId, id);
  if (endpoint.verifyToken === null) {
    throw new AppError("invalid_request", "Set the endpoint's verify token (the one your bot checks) first.");
  }
  const challenge = randomId(deps.random, "c", 24).slice(2);
  const url = new URL(endpoint.url);
  url.searchParams.set("hub.mode", "subscribe");
  url.searchParams.set("hub.verify_token", endpoint.verifyToken);
  url.searchParams.set("hub.challenge", challenge);
  const outcome = await safePost(
    url.toString(),
    { method: "GET", headers: { "user-agent": "proxy-webhooks/1" } },
    { ...deps.client, timeoutMs: deps.config.webhookTimeoutMs },
  );
  if (outcome.kind !== "response") {
    return { verified: false, status_code: null, error: outcome.error, response_excerpt: null };
  }
  return {
    verified: outcome.status === 200 && outcome.excerpt.trim() === challenge,
    status_code: outcome.status,
    error: null,
    response_excerpt: outcome.excerpt,
  };
}
