import { BY_CLI } from "../../src/audit/entry.ts";
import { createOperator } from "../../src/operators/operations.ts";
import { dashboardWorld } from "../dashboard/support.ts";
import { tempDir } from "../support/harness.ts";
import { processEnv, runMain } from "../support/process.ts";

export interface TestOperator {
  id: string;
  email: string;
  password: string;
  /** `sb_operator=…`, from a sign-in through POST /operator/session. */
  cookie: string;
}

/** Signs in through POST /operator/session and returns the Cookie header value. */
export async function operatorCookie(url: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${url}/operator/session`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: url },
    body: JSON.stringify({ email, password }),
  });
  if (res.status !== 204) throw new Error(`operator sign-in: ${res.status} ${await res.text()}`);
  return res.headers.get("set-cookie")?.split(";")[0] ?? "";
}

/**
 * The dashboard's world (an app on a fake upstream) with operators made as `switchboard admin
 * operators create` makes them; backups (SQLite) go to a directory of the test's own.
 */
export async function consoleWorld(env: Record<string, string> = {}) {
  const backups = tempDir();
  const world = await dashboardWorld({ BACKUP_TO: backups.path, ...env });
  let made = 0;
  return {
    ...world,
    async close() {
      await world.close();
      backups.cleanup();
    },
    async operator(email = `operator-${++made}@ops.example`, password = "operator password 1"): Promise<TestOperator> {
      const { id } = await createOperator(world.deps, { email, password }, BY_CLI);
      return { id, email, password, cookie: await operatorCookie(world.url, email, password) };
    },
    /** A console page as a browser asks for it (no redirect followed). */
    get(cookie: string, path: string): Promise<Response> {
      return fetch(`${world.url}${path}`, { headers: { cookie }, redirect: "manual" });
    },
    /** A console form's post as the browser sends it: same Origin, form-encoded, no redirect followed. */
    post(cookie: string, path: string, form: Record<string, string> = {}): Promise<Response> {
      return fetch(`${world.url}${path}`, {
        method: "POST",
        headers: { cookie, origin: world.url, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form).toString(),
        redirect: "manual",
      });
    },
  };
}

export type ConsoleWorld = Awaited<ReturnType<typeof consoleWorld>>;

/**
 * `switchboard admin operators …` in a process of its own, on the world's database. Exit 0: the
 * JSON answer on stdout; exit 1: the error envelope on stderr; exit 2: the usage text.
 */
export async function operatorsCli(world: ConsoleWorld, ...args: string[]) {
  const { deps } = world;
  const env = processEnv("unused", {
    DATABASE_URL: deps.databaseUrl,
    ...(deps.config.redis ? { REDIS_URL: deps.config.redis.url, REDIS_KEY_PREFIX: deps.config.redis.keyPrefix } : {}),
  });
  const result = await runMain(["admin", "operators", ...args], env);
  const json = result.code === 0 ? JSON.parse(result.stdout) : result.code === 1 ? JSON.parse(result.stderr) : null;
  return { ...result, json };
}
