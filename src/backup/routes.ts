import { optionalBody } from "../http/optional-body.ts";
import { Elysia, t } from "elysia";
import { byAdminToken, type AuditContext } from "../audit/entry.ts";
import { checkAdminToken } from "../auth/admin-guard.ts";
import type { Deps } from "../deps.ts";
import { AppError } from "../errors/catalog.ts";
import { clientIp, type Arrived } from "../http/client-ip.ts";
import { recordDownload, recordedBackup } from "./audit.ts";
import type { Backups } from "./backups.ts";

/**
 * The operator API's backups (docs/backups.md); backups is null where the database is
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
        by: await access(
          context.request,
          clientIp(deps.config.trustedProxies, context.server, (context as Arrived).arrived),
        ),
      }))
      .get(
        "",
        async () => {
          const service = available();
          return { location: service.target.where, data: await service.list(), last_failure: service.lastFailure() };
        },
        {
          detail: {
            ...detail,
            summary:
              "List the verified backups at BACKUP_TO (`location`: where it looked), newest first, with their manifests, and the last failure (null: none since the server started)",
          },
        },
      )
      .post(
        "",
        async ({ by, set, query }) => {
          const service = available();
          if (query.wait !== "false") {
            const manifest = await recordedBackup(deps, service.create(), by);
            set.status = 201;
            return manifest;
          }
          const { name, done } = await service.start();
          // Its failure is logged, counted and answered at GET …/{name}.json by Backups.
          recordedBackup(deps, done, by).catch(() => undefined);
          set.status = 202;
          set.headers.location = `/admin/backups/${name}.json`;
          return { name, status: "running", manifest: `/admin/backups/${name}.json` };
        },
        {
          // It takes no parameters: any body but none or `{}` is refused before a backup starts.
          ...optionalBody(t.Object({}, { additionalProperties: false })),
          query: t.Object({ wait: t.Optional(t.Union([t.Literal("true"), t.Literal("false")])) }),
          detail: {
            ...detail,
            summary:
              "Take a backup now: 201 with its manifest once it is verified and stored; with ?wait=false, 202 with its name at once, then poll GET /admin/backups/{name}.json (202 while it runs); 409 backup_running while one runs",
          },
        },
      )
      .get(
        "/:name",
        async ({ params, by, set }) => {
          const service = available();
          if (params.name.endsWith(".json")) {
            const backup = params.name.slice(0, -".json".length);
            const status = await service.status(backup);
            if (status === null) throw new AppError("not_found", "No backup of that name.");
            if (status.state === "taken") return status.manifest;
            if (status.state === "failed") {
              const { stage, error } = status.failure;
              throw new AppError("backup_failed", `The backup failed (${stage}): ${error}`);
            }
            set.status = 202;
            set.headers["retry-after"] = "2";
            return { name: backup, status: "running", step: status.step, at: status.at };
          }
          const file = await service.open(params.name);
          if (file === null) throw new AppError("not_found", "No backup of that name.");
          await recordDownload(deps, params.name, file.size, by);
          return new Response(file.stream(), {
            headers: {
              "content-type": "application/zstd",
              "content-length": String(file.size),
              "content-disposition": `attachment; filename="${params.name}"`,
            },
          });
        },
        {
          params: t.Object({ name: t.String() }),
          detail: {
            ...detail,
            summary:
              "Download a backup (streamed; recorded in the audit log), or its manifest as <name>.json: 200 once it is taken, 202 while it runs",
          },
        },
      )
  );
}
