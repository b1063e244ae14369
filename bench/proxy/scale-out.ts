/**
 * Row (p) of the proxy bench: the scale-out mode's backing services for one Switchboard instance,
 * a PostgreSQL server of the bench's own (server defaults, bench/support/postgres-cluster.ts) and
 * this machine's Redis under a key prefix of the run's own, both removed afterwards.
 */
import { RedisClient, SQL } from "bun";
import { startPostgresCluster } from "../support/postgres-cluster.ts";

const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

/** The local Redis server's pid, to count its CPU (none when it runs elsewhere). */
function redisPid(): number | undefined {
  const found = Bun.spawnSync(["pidof", "redis-server"], { stdout: "pipe" }).stdout.toString().trim().split(" ")[0];
  return found ? Number(found) : undefined;
}

export async function startScaleOutBacking(
  port: number,
): Promise<{ env: Record<string, string>; redisPid?: number; stop(): Promise<void> }> {
  const cluster = await startPostgresCluster(port);
  const server = new SQL({ url: cluster.url, max: 1 });
  await server.unsafe("CREATE DATABASE switchboard");
  await server.close();
  const prefix = `switchboard-bench-proxy-${process.pid}:`;
  return {
    redisPid: REDIS_URL.includes("127.0.0.1") ? redisPid() : undefined,
    env: { DATABASE_URL: cluster.url.replace(/\/postgres$/, "/switchboard"), REDIS_URL, REDIS_KEY_PREFIX: prefix },
    async stop() {
      cluster.stop();
      const redis = new RedisClient(REDIS_URL);
      const keys = (await redis.send("KEYS", [`${prefix}*`])) as string[];
      if (keys.length > 0) await redis.send("DEL", keys);
      redis.close();
    },
  };
}
