import type { Random } from "../runtime/random.ts";

/** What the simulator knows: WABAs with their tokens and app secrets, numbers, templates and media. */

export type ThroughputLevel = "STANDARD" | "HIGH";

export interface SimNumber {
  phoneNumberId: string;
  displayPhoneNumber?: string;
  verifiedName?: string;
  throughputLevel?: ThroughputLevel;
  qualityRating?: "GREEN" | "YELLOW" | "RED";
}

export interface SimWaba {
  wabaId: string;
  /** The token Switchboard must send as `Authorization: Bearer`. */
  accessToken: string;
  /** The secret `appsecret_proof` is keyed with: the BYO app's, or the service's APP_SECRET. */
  appSecret: string;
  numbers?: SimNumber[];
}

export interface SimTemplate {
  id: string;
  name: string;
  language: string;
  category: string;
  status: string;
  components: unknown[];
}

export interface SimMedia {
  id: string;
  phoneNumberId: string;
  mimeType: string;
  sha256: string;
  fileSize: number;
}

export interface NumberRecord extends Required<SimNumber> {
  wabaId: string;
}

/** Numeric ids like the platform's, from the injected random source. */
export function numericId(random: Random, digits = 15): string {
  let out = "";
  for (const b of random.bytes(digits)) out += String(b % 10);
  return out.replace(/^0/, "1");
}

/** A message id like the platform's (`wamid.` and 24 random bytes), from the injected random source. */
export const newMessageId = (random: Random): string => `wamid.${Buffer.from(random.bytes(24)).toString("base64url")}`;

export class SimWorld {
  readonly wabas = new Map<string, SimWaba>();
  readonly numbers = new Map<string, NumberRecord>();
  readonly templates = new Map<string, SimTemplate[]>();
  readonly media = new Map<string, SimMedia>();
  /** WABAs whose webhooks the service's app subscribed to (POST /{waba}/subscribed_apps). */
  readonly subscribed = new Set<string>();
  /** Numbers registered for the API, with the PIN they were registered with. */
  readonly registered = new Map<string, string>();
  /** Coexistence syncs asked for, as `{number}:{sync_type}`: the platform allows each once. */
  readonly smbSyncs = new Set<string>();

  addWaba(waba: SimWaba): void {
    this.wabas.set(waba.wabaId, { ...waba, numbers: [] });
    if (!this.templates.has(waba.wabaId)) this.templates.set(waba.wabaId, []);
    for (const number of waba.numbers ?? []) this.addNumber(waba.wabaId, number);
  }

  addNumber(wabaId: string, number: SimNumber): void {
    if (!this.wabas.has(wabaId)) throw new Error(`simulator: no WABA ${wabaId}`);
    this.numbers.set(number.phoneNumberId, {
      wabaId,
      phoneNumberId: number.phoneNumberId,
      displayPhoneNumber: number.displayPhoneNumber ?? `+1 555 01${number.phoneNumberId.slice(-2).padStart(2, "0")}`,
      verifiedName: number.verifiedName ?? "Simulated Business",
      throughputLevel: number.throughputLevel ?? "STANDARD",
      qualityRating: number.qualityRating ?? "GREEN",
    });
  }

  /** The WABA whose token governs an id (a WABA, a number, or a media object). */
  wabaOf(id: string): SimWaba | undefined {
    const wabaId = this.wabas.has(id)
      ? id
      : (this.numbers.get(id)?.wabaId ?? this.numbers.get(this.media.get(id)?.phoneNumberId ?? "")?.wabaId);
    return wabaId === undefined ? undefined : this.wabas.get(wabaId);
  }
}
