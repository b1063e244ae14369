import { optionalBody } from "../http/optional-body.ts";
import { Elysia, t } from "elysia";
import { byAdminToken, type AuditContext } from "../audit/entry.ts";
import { checkAdminToken } from "../auth/admin-guard.ts";
import type { Deps } from "../deps.ts";
import { AppError } from "../errors/catalog.ts";
import { clientIp, type Arrived } from "../http/client-ip.ts";
import { recordedBackup } from "./audit.ts";
import type { Backups } from "./backups.ts";

/**
 * The operator API's backups (docs/operations.md#backups); backups is null where the database is
 * not a SQLite file. `access` is the operator API's door and says who takes a backup, for the
 * audit log (ADMIN_TOKEN's holder or a signed-in operator: src/operators/admin-access.ts); by
 * default, ADMIN_TOKEN only.
 */
export function backupRoutes(
  deps: Pick<Deps, "config" | "store" | "clock" | "random">,
  backups: Backups | null,
  access: (request: Request, ip: string | null) => Promise<AuditContext> = async (request, ip) => {
    checkAdminToken(deps.config.adminToken, request.headers.get("authorization"));
    return byAdminToken(ip);
  },
) {
  const detail = { tags: ["Operator API"], security: [{ adminToken: [] }] };
  const available = (): Backups => {
    if (backups === null) throw new AppError("backup_unsupported");
    return backups;
  };
  return (
    new Elysia({ prefix: "/admin/backups" })
      // A transform hook, before the body is validated: who takes a backup, from the request's address.
      .derive(async (context) => ({
        by: await access(context.request, clientIp(context.server, (context as Arrived).arrived)),
      }))
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
