/**
 * Run by `npm test` before the suite: finds the outside tools some tests drive and, where it can
 * (root with apt-get, as on CI and a fresh VPS), installs the missing ones from Debian's packages.
 * A tool that cannot be had is said in one line; the tests that need it skip (each checks with
 * `tool()` below), and every other test runs.
 */
import { existsSync } from "node:fs";

export interface Tool {
  /** Debian's package that brings it. */
  pkg: string;
  /** Which tests skip without it. */
  needed: string;
  /** The command to run it, or null when it is not here. */
  find(): string[] | null;
}

const bin =
  (...paths: string[]) =>
  () => {
    for (const p of paths) {
      const found = p.startsWith("/") ? (existsSync(p) ? p : null) : Bun.which(p);
      if (found) return [found];
    }
    return null;
  };

export const TOOLS = {
  chromium: {
    pkg: "chromium",
    needed: "the browser tests (dashboard, /docs)",
    find: bin(process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"),
  },
  nginx: {
    pkg: "nginx",
    needed: "deploy/nginx.conf in front of two instances (PostgreSQL pass)",
    find: bin("nginx", "/usr/sbin/nginx"),
  },
  compose: {
    pkg: "docker-compose",
    needed: "`docker compose config` of compose.yaml",
    // Compose v2 (Docker's plugin) where Docker is installed, else v1 (Debian's docker-compose).
    find: () => {
      const docker = Bun.which("docker");
      if (
        docker &&
        Bun.spawnSync([docker, "compose", "version"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0
      )
        return [docker, "compose"];
      return bin("docker-compose")();
    },
  },
} satisfies Record<string, Tool>;

/** The tool's command, or null (and the test skips). */
export function tool(name: keyof typeof TOOLS): string[] | null {
  return TOOLS[name].find();
}

function install(missing: Tool[]): void {
  const apt = Bun.which("apt-get");
  if (!apt || process.getuid?.() !== 0 || process.env.SWITCHBOARD_TEST_NO_INSTALL === "1") return;
  const pkgs = missing.map((t) => t.pkg);
  console.log(`test tools: installing Debian's ${pkgs.join(", ")} (once; SWITCHBOARD_TEST_NO_INSTALL=1 skips this)`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  Bun.spawnSync([apt, "update", "-qq"], { env, stdout: "ignore", stderr: "inherit" });
  Bun.spawnSync([apt, "install", "-y", "-qq", ...pkgs], { env, stdout: "ignore", stderr: "inherit" });
}

if (import.meta.main) {
  const absent = () => Object.values(TOOLS).filter((t) => t.find() === null);
  if (absent().length > 0) install(absent());
  for (const t of absent())
    console.log(`test tools: ${t.pkg} is not on this machine and could not be installed: ${t.needed} will be skipped`);
}
