import type { PlatformNames } from "../platform/names.ts";

/**
 * docs/proxy.md#the-allow-list as data: the only calls the proxy forwards. A row names the method, the edge after the
 * id (null = the object itself), what the id must be, which bucket pays (docs/proxy.md#rate-limits) and which
 * upstream time-out applies (docs/proxy.md#time-outs-and-upstream-failures). Media rows are scoped by a required
 * `phone_number_id`.
 */
export type IdKind = "number" | "waba" | "media";
export type BucketKind = "number" | "waba";
export type TimeoutKind = "default" | "media";

interface Row {
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  readonly edge: string | null;
  readonly id: IdKind;
  readonly bucket: BucketKind;
  readonly timeout: TimeoutKind;
}

/** A row with its names, made once: traces and the request log name every call by them. */
export interface Route extends Row {
  /** The route template, e.g. `/{version}/{phone_number_id}/messages`. */
  readonly template: string;
  /** Method and template, e.g. `POST /{version}/{phone_number_id}/messages`: the request log's and usage's label. */
  readonly label: string;
}

const named = (row: Row): Route => {
  const template = `/{version}/{${row.id === "number" ? "phone_number" : row.id}_id}${row.edge === null ? "" : `/${row.edge}`}`;
  return { ...row, template, label: `${row.method} ${template}` };
};

/** The rows, with the business-profile edge in the platform's own word (PLATFORM_NAME). */
export const allowList = (names: PlatformNames): readonly Route[] =>
  (
    [
      { method: "POST", edge: "messages", id: "number", bucket: "number", timeout: "default" },
      { method: "PUT", edge: "messages", id: "number", bucket: "number", timeout: "default" },
      { method: "POST", edge: "media", id: "number", bucket: "number", timeout: "media" },
      // A number read comes before a media read: a GET on one of the account's numbers is a number read.
      { method: "GET", edge: null, id: "number", bucket: "waba", timeout: "default" },
      { method: "GET", edge: null, id: "media", bucket: "waba", timeout: "media" },
      { method: "DELETE", edge: null, id: "media", bucket: "waba", timeout: "media" },
      { method: "GET", edge: "message_templates", id: "waba", bucket: "waba", timeout: "default" },
      { method: "POST", edge: "message_templates", id: "waba", bucket: "waba", timeout: "default" },
      { method: "DELETE", edge: "message_templates", id: "waba", bucket: "waba", timeout: "default" },
      { method: "GET", edge: names.businessProfileEdge, id: "number", bucket: "waba", timeout: "default" },
    ] as const satisfies Row[]
  ).map(named);

/** The query parameter that scopes media calls to a number (docs/proxy.md#the-allow-list). */
export const MEDIA_SCOPE_PARAM = "phone_number_id";
