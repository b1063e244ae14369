import { optionalBody } from "../http/optional-body.ts";
import { Elysia, t } from "elysia";
import { checkAdminToken } from "../auth/admin-guard.ts";
import { AppError } from "../errors/catalog.ts";
import type { Config } from "../config/config.ts";
import type { Backups } from "./backups.ts";

/**
 * The operator API's backups (docs/operations.md#backups); backups is null where the database is
 * not a SQLite file. `access` is the operator API's door (ADMIN_TOKEN, or an operator's session:
 * src/operators/admin-access.ts); without one, ADMIN_TOKEN only.
 */
export function backupRoutes(
  deps: { config: Config },
  backups: Backups | null,
  access: (request: Request) => Promise<unknown> = async (request) =>
    checkAdminToken(deps.config.adminToken, request.headers.get("authorization")),
) {
  const detail = { tags: ["Operator API"], security: [{ adminToken: [] }] };
  const available = (): Backups => {
    if (backups === null) throw new AppError("backup_unsupported");
    return backups;
  };
  return new Elysia({ prefix: "/admin/backups" })
    .onTransform(async ({ request }) => {
      await access(request);
    })
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
      async ({ set }) => {
        const manifest = await available().create();
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
    );
}
