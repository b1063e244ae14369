import { Elysia } from "elysia";
import htmxPath from "htmx.org/dist/htmx.min.js" with { type: "file" };
import { SECURITY_HEADERS } from "../../http/security-headers.ts";
import cssPath from "./dashboard.css" with { type: "file" };
import faviconPath from "./favicon.svg" with { type: "file" };
import scriptPath from "./dashboard.js" with { type: "file" };
import signupPath from "./signup.js" with { type: "file" };

/** The dashboard's static files, embedded in the compiled binary (no CDN, nothing fetched at run time). */
const ASSETS: Record<string, { path: string; type: string }> = {
  "htmx.min.js": { path: htmxPath, type: "text/javascript; charset=utf-8" },
  "dashboard.js": { path: scriptPath, type: "text/javascript; charset=utf-8" },
  "signup.js": { path: signupPath, type: "text/javascript; charset=utf-8" },
  "dashboard.css": { path: cssPath, type: "text/css; charset=utf-8" },
  "favicon.svg": { path: faviconPath, type: "image/svg+xml" },
};

export function assetRoutes() {
  return new Elysia().get(
    "/assets/:name",
    ({ params, set }) => {
      const asset = ASSETS[params.name];
      if (!asset) {
        set.status = 404;
        return "Not found.";
      }
      return new Response(Bun.file(asset.path), {
        headers: { "content-type": asset.type, "cache-control": "public, max-age=300", ...SECURITY_HEADERS },
      });
    },
    { detail: { hide: true } },
  );
}
