import { swagger } from "@elysiajs/swagger";

/** Checked to render this service's document in headless Chromium (2026-11-22). */
export const SCALAR_VERSION = "1.72.1";

/**
 * Nothing leaves for Scalar's own services: no usage telemetry, no fonts from its CDN, no "Ask AI"
 * or "Generate MCP" (they send the document out), no developer toolbar. The plugin's types know an
 * older Scalar's options, hence the cast.
 */
const SCALAR_CONFIG = {
  telemetry: false,
  withDefaultFonts: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
} as Record<string, unknown>;

/**
 * The OpenAPI document of the operator and dashboard APIs at /docs/json, and a page reading it at
 * /docs. The page runs Scalar's script, from jsDelivr, on this origin, where the operator's and the
 * dashboard's credentials live: so a fixed version, not whatever "latest" is on the day.
 */
export function apiDocs() {
  return swagger({
    path: "/docs",
    scalarVersion: SCALAR_VERSION,
    scalarConfig: SCALAR_CONFIG,
    exclude: [/^\/(?!admin|api)/],
    documentation: {
      info: {
        title: "Switchboard",
        version: "1",
        description: "Operator API (bearer ADMIN_TOKEN) and dashboard API (session cookie from POST /api/session).",
      },
      components: { securitySchemes: { adminToken: { type: "http", scheme: "bearer" } } },
    },
  });
}
