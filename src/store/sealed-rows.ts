import type { Sealer } from "../crypto/sealer.ts";
import type { Waba } from "./types.ts";
import type { DeliveryEndpoint, Endpoint, EndpointPatch } from "./endpoints.ts";

/** An endpoints row as every backend's schema reads it (secrets sealed). */
export interface EndpointRow extends Omit<Endpoint, "secret" | "previousSecret" | "verifyToken"> {
  secretEnc: string;
  previousSecretEnc: string | null;
  verifyTokenEnc: string | null;
}

/** A wabas row as every backend's schema reads it (secrets sealed). */
export interface WabaRow extends Omit<Waba, "accessToken" | "appSecret"> {
  accessTokenEnc: string;
  appSecretEnc: string | null;
}

/** An endpoint as its row keeps it. */
export function sealEndpoint(endpoint: Endpoint, sealer: Sealer): EndpointRow {
  const { secret, previousSecret, verifyToken, ...rest } = endpoint;
  return {
    ...rest,
    secretEnc: sealer.seal(secret),
    previousSecretEnc: previousSecret === null ? null : sealer.seal(previousSecret),
    verifyTokenEnc: verifyToken === null ? null : sealer.seal(verifyToken),
  };
}

/** The columns a patch of an endpoint sets: those it gives, secrets sealed. */
export function sealEndpointPatch(patch: EndpointPatch, sealer: Sealer): Partial<EndpointRow> {
  const { secret, previousSecret, verifyToken, ...rest } = patch;
  const row: Partial<EndpointRow> = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  if (secret !== undefined) row.secretEnc = sealer.seal(secret);
  if (previousSecret !== undefined)
    row.previousSecretEnc = previousSecret === null ? null : sealer.seal(previousSecret);
  if (verifyToken !== undefined) row.verifyTokenEnc = verifyToken === null ? null : sealer.seal(verifyToken);
  return row;
}

export function sealWaba(waba: Waba, sealer: Sealer): WabaRow {
  const { accessToken, appSecret, ...rest } = waba;
  return {
    ...rest,
    accessTokenEnc: sealer.seal(accessToken),
    appSecretEnc: appSecret === null ? null : sealer.seal(appSecret),
  };
}

/** The columns a new connection of a stored WABA replaces: its token and app secret, state, cause and time. */
export function reconnectedWaba(waba: Waba, sealer: Sealer) {
  const { wabaId: _w, accountId: _a, createdAt: _c, ...columns } = sealWaba(waba, sealer);
  return columns;
}

export function openWaba(row: WabaRow, sealer: Sealer): Waba {
  return {
    wabaId: row.wabaId,
    accountId: row.accountId,
    accessToken: sealer.open(row.accessTokenEnc),
    appSecret: row.appSecretEnc === null ? null : sealer.open(row.appSecretEnc),
    status: row.status,
    causeCode: row.causeCode,
    causeMessage: row.causeMessage,
    causeAt: row.causeAt,
    causeRequestId: row.causeRequestId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/**
 * Opens endpoints' signing secrets, keeping what it opened by stored (sealed) text: a sealed text
 * always opens to the same secret, and every attempt reads its endpoint's.
 */
export class EndpointOpener {
  private readonly opened = new Map<string, string>();

  constructor(private readonly sealer: Sealer) {}

  private open(sealed: string): string {
    let plain = this.opened.get(sealed);
    if (plain === undefined) {
      plain = this.sealer.open(sealed);
      if (this.opened.size >= 10_000) this.opened.clear();
      this.opened.set(sealed, plain);
    }
    return plain;
  }

  endpoint(row: EndpointRow): Endpoint {
    return {
      ...this.deliveryEndpoint(row),
      fields: row.fields,
      phoneNumberId: row.phoneNumberId,
      signature: row.signature,
      verifyToken: row.verifyTokenEnc === null ? null : this.sealer.open(row.verifyTokenEnc),
      disabledReason: row.disabledReason,
      consecutiveFailures: row.consecutiveFailures,
      lastSuccessAt: row.lastSuccessAt,
      warnedAt: row.warnedAt,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
  }

  deliveryEndpoint(row: EndpointRow): DeliveryEndpoint {
    return {
      id: row.id,
      accountId: row.accountId,
      url: row.url,
      enabled: row.enabled,
      secret: this.open(row.secretEnc),
      previousSecret: row.previousSecretEnc === null ? null : this.open(row.previousSecretEnc),
      previousSecretExpiresAt: row.previousSecretExpiresAt,
    };
  }
}
