import { optionalBody } from "../http/optional-body.ts";
import { Elysia, t } from "elysia";
import { byAdminToken } from "../audit/entry.ts";
import { checkAdminToken } from "../auth/admin-guard.ts";
import type { Deps } from "../deps.ts";
import { AppError } from "../errors/catalog.ts";
import { clientIp, type Arrived } from "../http/client-ip.ts";
import { recordedBackup } from "./audit.ts";
import type { Backups } from "./backups.ts";

/** The operator API's backups (docs/operations.md#backups); backups is null where the database is not a SQLite file. */
export function backupRoutes(deps: Pick<Deps, "config" | "store" | "clock" | "random">, backups: Backups | null) {
  const detail = { tags: ["Operator API"], security: [{ adminToken: [] }] };
  const available = (): Backups => {
    if (backups === null) throw new AppError("backup_unsupported");
    return backups;
  };
  return (
    new Elysia({ prefix: "/admin/backups" })
      .onTransform(({ request }) => checkAdminToken(deps.config.adminToken, request.headers.get("authorization")))
      // Who takes a backup, for the audit log: the token's holder, from the request's address.
      .derive((context) => ({ by: byAdminToken(clientIp(context.server, (context as Arrived).arrived)) }))
      .get(
        "",
        async () => {
          const service = available();
          return { data: await service.list(), last_failure: service.lastFailure() };
        },
        {
          detail: {
            ...detail,
            summary:
              "List the verified backups, newest first, with their manifests, and the last failure (null: none since the server started)",
          },
        },
      )
      .post(
        "",
        async ({ by, set }) => {
          const service = available();
          const manifest = await recordedBackup(deps, () => service.create(), by);
          set.status = 201;
          return manifest;
        },
        {
          // It takes no parameters: any body but none or `{}` is refused before a backup starts.
          ...optionalBody(t.Object({}, { additionalProperties: false })),
          detail: {
            ...detail,
            summary:
              "Take a backup now: answers with its manifest once it is verified and stored; 409 backup_running while one runs",
          },
        },
      )
      .get(
        "/:name",
        async ({ params }) => {
          const file = await available().open(params.name);
          if (file === null) throw new AppError("not_found", "No backup of that name.");
          const json = params.name.endsWith(".json");
          return new Response(file.stream(), {
            headers: {
              "content-type": json ? "application/json" : "application/zstd",
              "content-length": String(file.size),
              ...(json ? {} : { "content-disposition": `attachment; filename="${params.name}"` }),
            },
          });
        },
        {
          params: t.Object({ name: t.String() }),
          detail: { ...detail, summary: "Download a backup (streamed), or its manifest as <name>.json" },
        },
      )
  );
}
