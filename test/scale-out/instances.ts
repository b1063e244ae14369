import { emptyPostgresDatabase } from "../support/backend.ts";
import { freePort, MAIN, processEnv, ROOT, waitForOk } from "../support/process.ts";

export interface Instance {
  url: string;
  port: number;
  /** SIGKILL: the process dies at once, whatever it was doing. */
  kill(): void;
  /** Sends a signal (SIGSTOP pauses the process, SIGCONT resumes it). */
  signal(signal: NodeJS.Signals): void;
  exited: Promise<number>;
}

/**
 * A scale-out deployment for a test: one PostgreSQL database of its own and one Redis key prefix,
 * on which `start()` runs real `switchboard serve` processes, each on its own port (or on `port`,
 * as a restart of the instance that had it). `stop()` kills them, drops the database and deletes
 * the prefix's keys.
 */
export async function scaleOut(env: Record<string, string> = {}) {
  const database = await emptyPostgresDatabase();
  const prefix = `${database.name}:`;
  const instances: Instance[] = [];
  const start = async (extra: Record<string, string> = {}, port = freePort()): Promise<Instance> => {
    const proc = Bun.spawn([process.execPath, MAIN, "serve"], {
      cwd: ROOT,
      env: processEnv("", {
        DATABASE_URL: database.url,
        REDIS_URL: "redis://127.0.0.1:6379",
        REDIS_KEY_PREFIX: prefix,
        PORT: String(port),
        HOST: "127.0.0.1",
        DEV_MODE: "1",
        LOG_LEVEL: "warn",
        ...env,
        ...extra,
      }),
      stdout: "ignore",
      stderr: "inherit",
    });
    const instance = {
      url: `http://127.0.0.1:${port}`,
      port,
      kill: () => proc.kill("SIGKILL"),
      signal: (signal: NodeJS.Signals) => proc.kill(signal),
      exited: proc.exited,
    };
    instances.push(instance);
    await waitForOk(`${instance.url}/healthz`);
    return instance;
  };
  return {
    databaseUrl: database.url,
    start,
    async stop() {
      for (const instance of instances) {
        instance.signal("SIGCONT");
        instance.kill();
      }
      await Promise.all(instances.map((i) => i.exited));
      await database.drop();
      const redis = new Bun.RedisClient("redis://127.0.0.1:6379");
      const keys = (await redis.send("KEYS", [`${prefix}*`])) as string[];
      if (keys.length > 0) await redis.send("DEL", keys);
      redis.close();
    },
  };
}

/** Waits, boundedly, until `ready` holds. */
export async function until(ready: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(10);
  }
}

/** One request as the receiver saw it: when it came (performance.now(), and the wall clock's ms), and when it was answered or its sender went away. */
export interface Arrival {
  webhookId: string;
  at: number;
  wallAt: number;
  /** When its 200 was handed back; null while it waits (and for ever if its sender died first). */
  answeredAt: number | null;
  /** When its sender closed the connection before the answer (a killed instance); null otherwise. */
  abortedAt: number | null;
}

/**
 * A receiver that answers each request after `holdMs` (or when released, with `hold`), counting
 * the webhooks it got by path and message id, the most requests to a path in flight at once, and
 * each request as it arrives, with when it was answered or abandoned (so that a test can prove
 * that a kill landed before the answer).
 */
export function countingReceiver(holdMs = 0) {
  const inFlightAt = new Map<string, number>();
  const maxAt = new Map<string, number>();
  let inFlight = 0;
  let holding = false;
  const held: (() => void)[] = [];
  const seen = new Map<string, string[]>();
  const arrivals: Arrival[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const arrival: Arrival = {
        webhookId: req.headers.get("webhook-id") ?? "",
        at: performance.now(),
        wallAt: Date.now(),
        answeredAt: null,
        abortedAt: null,
      };
      arrivals.push(arrival);
      req.signal.addEventListener("abort", () => {
        if (arrival.answeredAt === null) arrival.abortedAt = performance.now();
      });
      inFlight++;
      inFlightAt.set(path, (inFlightAt.get(path) ?? 0) + 1);
      maxAt.set(path, Math.max(maxAt.get(path) ?? 0, inFlightAt.get(path)!));
      try {
        const body = await req.text();
        if (holding) await new Promise<void>((resolve) => held.push(resolve));
        else if (holdMs > 0) await Bun.sleep(holdMs);
        const list = seen.get(path) ?? [];
        for (const match of body.matchAll(/"id":"(wamid\.[^"]+)"/g)) list.push(match[1]!);
        seen.set(path, list);
        if (req.signal.aborted) return new Response("gone", { status: 499 });
        arrival.answeredAt = performance.now();
        return new Response("ok");
      } finally {
        inFlight--;
        inFlightAt.set(path, inFlightAt.get(path)! - 1);
      }
    },
  });
  return {
    url: (path: string) => `http://127.0.0.1:${server.port}${path}`,
    seen,
    arrivals,
    /** The most requests to `path` that were in flight at once. */
    maxInFlight: (path: string) => maxAt.get(path) ?? 0,
    get inFlight() {
      return inFlight;
    },
    /** From now on requests wait until released (the ones already answered stay answered). */
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const resolve of held.splice(0)) resolve();
    },
    stop: () => server.stop(true),
  };
}
