// scratch: in-process A/B of Switchboard's proxy path (not committed)
import { createApp } from "../../src/app.ts";
import { parseConfig } from "../../src/config/config.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { systemDeps } from "../../src/runtime/system-deps.ts";
import { MemoryLimiter } from "../../src/limits/limiter.ts";
import { createProxy } from "../../src/proxy/pipeline.ts";
import * as ops from "../../src/admin/operations.ts";
const mode = process.env.MODE ?? "app";
const config = parseConfig({ DATABASE_URL: `file:/tmp/exp2/db-${process.pid}.db`, UPSTREAM_URL: process.env.UPSTREAM_URL!, APP_SECRET: "x", ENCRYPTION_KEY: Buffer.alloc(32, 3).toString("base64"), LOG_LEVEL: process.env.LOG_LEVEL ?? "info" });
const deps = systemDeps(config, createLogger(config.logLevel, () => {}));
const acc = await ops.createAccount(deps, { name: "b", email: "b@example.com" });
const { key } = await ops.createApiKey(deps, acc.id, { mode: "live" });
await ops.createWaba(deps, acc.id, { waba_id: "900", access_token: "tok" });
const paths: string[] = [];
for (let i = 0; i < 200; i++) {
  const id = String(100000000 + i);
  await deps.store.directory.createNumber({ phoneNumberId: id, accountId: acc.id, wabaId: "900", kind: "embedded", status: "connected", throughputLevel: "STANDARD", displayPhoneNumber: null, verifiedName: null, syncedAt: null, syncError: null, createdAt: 0, updatedAt: 0 });
  paths.push(`"/v21.0/${id}/messages"`);
}
await Bun.write("/tmp/exp2/load.lua", (await Bun.file("bench/proxy/load.lua.template").text()).replace("__PATHS__", paths.join(",")).replace("__KEY__", key));
let port: number;
if (mode === "app") {
  const app = createApp(deps).listen({ port: 0, hostname: "127.0.0.1" });
  port = app.server!.port!;
} else {
  const handle = createProxy(deps, new MemoryLimiter(deps.clock));
  port = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: handle }).port!;
}
console.log(`PORT ${port}`);
if (process.env.EXIT_AFTER) setTimeout(() => process.exit(0), Number(process.env.EXIT_AFTER));
