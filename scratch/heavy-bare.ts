// bare.ts, but with the whole Switchboard app built in the same process (not serving).
import { testDeps } from "../test/support/harness.ts";
import { createApp } from "../src/app.ts";
const deps = testDeps();
const app = createApp(deps);
(globalThis as any).keep = app;
await app.handle(new Request("http://x/healthz"));
await import("../bench/proxy/bare.ts");
