import { openapi } from "@elysiajs/openapi";
import { escapeHtml } from "@kitajs/html";
import { Elysia } from "elysia";
// The package's exports map does not list its browser bundle, so it is named by its place on disk
// (a direct dependency always sits at the top of node_modules). Embedded by `bun build --compile`.
import scalarBundlePath from "../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with {
  type: "file",
};
import { contentSecurityPolicy, SECURITY_HEADERS } from "./security-headers.ts";

/** The npm package's version (package.json pins it exactly); checked to render this service's document in headless Chromium. */
export const SCALAR_VERSION = "1.72.1";

/** Where the page loads Scalar's bundle from: the version in the path, so it can be cached for good. */
export const SCALAR_BUNDLE_PATH = `/docs/assets/scalar-api-reference-${SCALAR_VERSION}.js`;

/**
 * Nothing leaves for Scalar's own services: no usage telemetry, no fonts from its CDN, no "Ask AI"
 * or "Generate MCP" (they send the document out), no developer toolbar. (The CSP below would stop
 * such requests anyway; these keep the page from trying.)
 */
const SCALAR_CONFIG = {
  url: "/docs/json",
  telemetry: false,
  withDefaultFonts: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
};

/**
 * The page: Scalar's standalone bundle from this binary, configured by its HTML API (an empty
 * `<script id="api-reference">` is not run, so it needs no exception in the CSP).
 */
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard API</title>
<link rel="icon" href="/dashboard/assets/favicon.svg">
</head>
<body>
<script id="api-reference" data-configuration="${escapeHtml(JSON.stringify(SCALAR_CONFIG))}"></script>
<script src="${SCALAR_BUNDLE_PATH}"></script>
</body>
</html>
`;

/**
 * The dashboard's policy, but for styles: Scalar's components add `<style>` elements (its theme,
 * its toasts) and style attributes (on every code sample) that cannot carry a nonce; the bundle
 * nonces only its main stylesheet. Scripts stay 'self' only (no inline script, no eval: the one
 * `Function('')` the bundle tries is a feature probe that falls back), and no directive names
 * another origin, so an injected style could not send anything out either.
 */
export const DOCS_CONTENT_SECURITY_POLICY = contentSecurityPolicy({ "style-src": "'self' 'unsafe-inline'" });

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  ...SECURITY_HEADERS,
  "content-security-policy": DOCS_CONTENT_SECURITY_POLICY,
};

/** zlib's gzip off the serving thread; node:zlib is loaded with the first request that wants it, not at start. */
async function gzipped(bytes: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const { gzip } = await import("node:zlib");
  return new Promise((resolve, reject) =>
    gzip(bytes, (error, out) => (error ? reject(error) : resolve(new Uint8Array(out)))),
  );
}

/**
 * The bundle is 4.3 MB, 1.3 MB gzipped: compressed once, on the first request that accepts gzip,
 * on zlib's thread (about 0.1 s), and kept.
 */
function bundleRoute() {
  let compressed: Promise<Uint8Array<ArrayBuffer>> | undefined;
  const headers: Record<string, string> = {
    "content-type": "text/javascript; charset=utf-8",
    "cache-control": "public, max-age=31536000, immutable",
    vary: "accept-encoding",
    ...SECURITY_HEADERS,
  };
  return async (request: Request): Promise<Response> => {
    if (!/\bgzip\b/.test(request.headers.get("accept-encoding") ?? ""))
      return new Response(Bun.file(scalarBundlePath), { headers });
    compressed ??= Bun.file(scalarBundlePath).bytes().then(gzipped);
    return new Response(await compressed, { headers: { ...headers, "content-encoding": "gzip" } });
  };
}

/**
 * The OpenAPI document of the operator and dashboard APIs at /docs/json, and Scalar's API reference
 * reading it at /docs, entirely from this binary: on a network without internet the page works,
 * and no third party's script runs on the origin that holds the operator's and the dashboard's
 * credentials. The page is sent with the dashboard's CSP family: nothing from another origin.
 */
export function apiDocs() {
  const bundle = bundleRoute();
  return new Elysia({ name: "api-docs" })
    .use(
      openapi({
        path: "/docs",
        specPath: "/docs/json",
        // The page below is ours: the plugin's loads Scalar from a CDN.
        provider: null,
        openapiVersion: "3.0.3",
        exclude: { paths: [/^\/(?!admin|api)/] },
        documentation: {
          info: {
            title: "Switchboard",
            version: "1",
            description: "Operator API (bearer ADMIN_TOKEN) and dashboard API (session cookie from POST /api/session).",
          },
          components: { securitySchemes: { adminToken: { type: "http", scheme: "bearer" } } },
        },
      }),
    )
    .get("/docs", () => new Response(PAGE, { headers: PAGE_HEADERS }), { detail: { hide: true } })
    .get(SCALAR_BUNDLE_PATH, ({ request }) => bundle(request), { detail: { hide: true } });
}
