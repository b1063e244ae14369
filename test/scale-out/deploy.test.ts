import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startSimulator } from "../../src/simulator/server.ts";
import { testBackend } from "../support/backend.ts";
import { tempDir } from "../support/harness.ts";
import { freePort, ROOT, waitForOk } from "../support/process.ts";
import { tool } from "../support/test-tools.ts";
import { eventBody, messageChange, postUpstream, relayAccount } from "../webhooks/support.ts";
import { countingReceiver, scaleOut, until } from "./instances.ts";

// What docs/operations.md#scale-out tells an operator to run: compose.yaml and the load balancer's
// deploy/nginx.conf, checked as far as this machine allows (docker, when there is one).

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const compose = Bun.YAML.parse(readFileSync(join(ROOT, "compose.yaml"), "utf8")) as {
  services: Record<
    string,
    { environment?: Record<string, string>; volumes?: string[]; depends_on?: unknown; ports?: string[] }
  >;
};
const instances = Object.keys(compose.services).filter((name) => name.startsWith("switchboard-"));

describe("compose.yaml", () => {
  test("PostgreSQL, Redis, two Switchboard instances sharing every variable docs/operations.md#scale-out names, and nginx in front with deploy/nginx.conf", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["lb", "postgres", "redis", "switchboard-1", "switchboard-2"]);
    const envs = instances.map((name) => compose.services[name]!.environment!);
    for (const env of envs) {
      expect(env.DATABASE_URL).toStartWith("postgres://");
      expect(env.DATABASE_URL).toContain("@postgres:5432/");
      expect(env.REDIS_URL).toBe("redis://redis:6379");
      for (const shared of ["DATABASE_URL", "REDIS_URL", "REDIS_KEY_PREFIX", "ENCRYPTION_KEY", "APP_SECRET"])
        expect(env[shared]).toBe(envs[0]![shared]!);
    }
    expect(compose.services.lb!.volumes).toContain("./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro");
    const upstreams = [
      ...readFileSync(join(ROOT, "deploy/nginx.conf"), "utf8").matchAll(/^\s*server (switchboard-\d+):8080\b/gm),
    ].map((m) => m[1]);
    expect(upstreams.sort()).toEqual(instances.sort());
  });

  test("the instances trust nginx's X-Forwarded-For, which nginx sets to the client's address (TRUSTED_PROXIES)", () => {
    const lb = compose.services.lb as { networks?: { default?: { ipv4_address?: string } } };
    const address = lb.networks?.default?.ipv4_address;
    expect(address).toBeDefined();
    for (const name of instances) expect(compose.services[name]!.environment!.TRUSTED_PROXIES).toBe(address!);
    expect(readFileSync(join(ROOT, "deploy/nginx.conf"), "utf8")).toMatch(
      /^\s*proxy_set_header X-Forwarded-For \$remote_addr;/m,
    );
  });

  const composeCli = tool("compose");
  test.skipIf(composeCli === null)("docker compose config accepts it", () => {
    const checked = Bun.spawnSync([...(composeCli ?? []), "config", "--quiet"], {
      cwd: ROOT,
      env: { ...process.env, APP_SECRET: "s", ENCRYPTION_KEY: Buffer.alloc(32).toString("base64") },
      stderr: "pipe",
    });
    expect(checked.stderr.toString()).toBe("");
    expect(checked.exitCode).toBe(0);
  });
});

const nginx = tool("nginx")?.[0] ?? null;

describe.skipIf(testBackend() !== "postgres" || nginx === null)("deploy/nginx.conf in front of two instances", () => {
  test("spreads calls and events over both; each event is delivered once whichever instance took it", async () => {
    const sim = startSimulator();
    cleanups.push(() => sim.stop());
    const cluster = await scaleOut({ UPSTREAM_URL: sim.url });
    cleanups.push(() => cluster.stop());
    const [a, b] = [await cluster.start(), await cluster.start()];

    // The shipped configuration, pointed at this test's two processes and port.
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const port = freePort();
    const site = readFileSync(join(ROOT, "deploy/nginx.conf"), "utf8")
      .replace(/switchboard-1:8080/, a!.url.slice("http://".length))
      .replace(/switchboard-2:8080/, b!.url.slice("http://".length))
      .replace(/listen 8080;/, `listen 127.0.0.1:${port};`);
    writeFileSync(join(dir.path, "site.conf"), site);
    writeFileSync(
      join(dir.path, "nginx.conf"),
      `daemon off; pid ${dir.path}/nginx.pid; error_log stderr error;
      events {} http { access_log off; client_body_temp_path ${dir.path}; proxy_temp_path ${dir.path}; include ${dir.path}/site.conf; }`,
    );
    const lb = Bun.spawn([nginx!, "-c", join(dir.path, "nginx.conf"), "-p", dir.path], {
      stdout: "ignore",
      stderr: "inherit",
    });
    cleanups.push(async () => {
      lb.kill();
      await lb.exited;
    });
    const url = `http://127.0.0.1:${port}`;
    await waitForOk(`${url}/healthz`);

    const rx = countingReceiver();
    cleanups.push(() => rx.stop());
    const account = await relayAccount(url);
    await account.endpoint(rx.url("/behind-nginx"));
    // Both instances know the endpoint within a second (docs/operations.md#scale-out): probes through nginx until
    // one is delivered by each.
    await until(
      async () => {
        await postUpstream(
          url,
          eventBody([{ id: account.wabaId, changes: [messageChange(account.numbers[0]!, "probe")] }]),
        );
        await postUpstream(
          url,
          eventBody([{ id: account.wabaId, changes: [messageChange(account.numbers[0]!, "probe")] }]),
        );
        return (rx.seen.get("/behind-nginx")?.length ?? 0) >= 2;
      },
      "both instances to know the endpoint",
      3_000,
    );
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const change = messageChange(account.numbers[0]!, `through nginx ${i}`);
      ids.push((change.value.messages[0] as { id: string }).id);
      expect((await postUpstream(url, eventBody([{ id: account.wabaId, changes: [change] }]))).status).toBe(200);
    }
    const delivered = () => (rx.seen.get("/behind-nginx") ?? []).filter((id) => ids.includes(id));
    await until(() => delivered().length >= 40, "every event behind nginx");
    expect(new Set(delivered())).toEqual(new Set(ids));
    expect(delivered()).toHaveLength(40);
    // Round robin: each instance accepted some of the events.
    const metrics = await Promise.all(
      [a!, b!].map(
        async (i) =>
          (await (await fetch(`${i.url}/metrics`)).text()).match(
            /switchboard_webhook_events_total\{result="accepted"\} (\d+)/,
          )?.[1],
      ),
    );
    expect(metrics.map(Number).every((n) => n > 0)).toBe(true);
  });
});
