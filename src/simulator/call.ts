import type { Random } from "../runtime/random.ts";
import type { PlatformNames } from "../platform/names.ts";
import type { RecordedRequest } from "./recorder.ts";
import type { SimWorld } from "./world.ts";

// A call the simulator answers and its answer, shared by every edge's handler (handlers.ts, messages.ts).

/** A message the simulator accepted: what a later status webhook (sent, delivered, read) is about. */
export interface AcceptedMessage {
  messageId: string;
  wabaId: string;
  phoneNumberId: string;
  to: string;
  type: string;
}

export interface CallContext {
  world: SimWorld;
  /** The platform's words this simulator speaks (PLATFORM_NAME). */
  names: PlatformNames;
  random: Random;
  request: RecordedRequest;
  params: URLSearchParams;
  id: string;
  edge: string | null;
  baseUrl: string;
  traceId: string;
  accepted(message: AcceptedMessage): void;
  /** A coexistence sync the platform accepted: its webhooks follow. */
  syncRequested(sync: { phoneNumberId: string; syncType: SmbSyncType }): void;
}

export const SMB_SYNC_TYPES = ["smb_app_state_sync", "history"] as const;
export type SmbSyncType = (typeof SMB_SYNC_TYPES)[number];

export interface Answer {
  status: number;
  body: unknown;
}
