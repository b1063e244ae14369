import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "../../src/config/config.ts";
import { tempDir } from "../support/harness.ts";
import { ROOT } from "../support/process.ts";

// Issue 35: the single-machine recipe of docs/deploy-vps.md ships its systemd unit and env file in
// deploy/. The unit passes `systemd-analyze verify` where systemd is present (any warning fails),
// and is parsed and held to what the service needs everywhere; the env file, its placeholders
// filled, is a configuration the server accepts, and names paths the unit lets it write.

const unitText = await Bun.file(join(ROOT, "deploy/switchboard.service")).text();
const envText = await Bun.file(join(ROOT, "deploy/switchboard.env.example")).text();
const docText = await Bun.file(join(ROOT, "docs/deploy-vps.md")).text();
const dir = tempDir();
afterAll(() => dir.cleanup());

/** A unit file's sections, each key with every value it is given (in order). */
function parseUnit(text: string): Record<string, Record<string, string[]>> {
  const sections: Record<string, Record<string, string[]>> = {};
  let current: Record<string, string[]> | null = null;
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const section = /^\[(\w+)\]$/.exec(line);
    if (section) {
      current = {};
      sections[section[1]!] = current;
      continue;
    }
    const pair = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (!pair || current === null) throw new Error(`line ${i + 1} is not key=value in a section: ${raw}`);
    current[pair[1]!] = [...(current[pair[1]!] ?? []), pair[2]!];
  }
  return sections;
}

/** An env file as systemd's EnvironmentFile= reads it (and sh does): KEY=value, a value in double quotes unquoted. */
function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const pair = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!pair) throw new Error(`not KEY=value: ${raw}`);
    const value = pair[2]!;
    if (/\s/.test(value) && !/^".*"$/.test(value))
      throw new Error(`${pair[1]}: a value with spaces needs double quotes`);
    env[pair[1]!] = value.replace(/^"(.*)"$/, "$1");
  }
  return env;
}

const unit = parseUnit(unitText);
const service = unit.Service!;
const one = (key: string) => {
  const values = service[key];
  expect(values).toHaveLength(1);
  return values![0]!;
};

describe("deploy/switchboard.service", () => {
  test.skipIf(Bun.which("systemd-analyze") === null)(
    "systemd-analyze verify passes it without a warning (its binary put where ExecStart says)",
    () => {
      // verify checks that ExecStart's program exists: a stand-in at a path of the test's own.
      const binary = join(dir.path, "switchboard");
      writeFileSync(binary, "#!/bin/sh\nexit 0\n");
      chmodSync(binary, 0o755);
      const path = join(dir.path, "switchboard.service");
      writeFileSync(path, unitText.replaceAll("/usr/local/bin/switchboard", binary));
      const verify = Bun.spawnSync(["systemd-analyze", "verify", path], { stdout: "pipe", stderr: "pipe" });
      expect(verify.stderr.toString()).toBe("");
      expect(verify.exitCode).toBe(0);
    },
  );

  test("runs `switchboard serve` as its own user with the env file, stops it with SIGTERM and waits for it", () => {
    expect(Object.keys(unit).sort()).toEqual(["Install", "Service", "Unit"]);
    expect(one("ExecStart")).toBe("/usr/local/bin/switchboard serve");
    expect(one("User")).toBe("switchboard");
    expect(one("EnvironmentFile")).toBe("/etc/switchboard/switchboard.env");
    expect(one("KillSignal")).toBe("SIGTERM");
    // Requests in flight may wait 120 s for the platform (UPSTREAM_MEDIA_TIMEOUT_MS) before the exit.
    expect(Number(one("TimeoutStopSec"))).toBeGreaterThan(120);
    expect(one("Restart")).toBe("on-failure");
    expect(unit.Install!.WantedBy).toEqual(["multi-user.target"]);
    // Bun's JIT writes the code it runs: a unit that forbids it would not start.
    expect(service.MemoryDenyWriteExecute).toBeUndefined();
  });

  test("lets the process write only its state directory, where the env file puts the database and backups", () => {
    const state = `/var/lib/${one("StateDirectory")}`;
    expect(one("WorkingDirectory")).toBe(state);
    expect(one("ProtectSystem")).toBe("strict");
    expect(one("ReadWritePaths")).toBe(state);
    const env = parseEnv(envText);
    expect(env.DATABASE_URL).toBe(`file:${state}/switchboard.db`);
    expect(env.BACKUP_TO).toStartWith(`${state}/`);
  });
});

describe("deploy/switchboard.env.example", () => {
  test("its placeholders filled in, it is a configuration the server accepts: loopback behind a proxy it trusts", () => {
    const env = parseEnv(envText);
    const placeholders = Object.entries(env).filter(([, v]) => v.startsWith("replace-with"));
    expect(placeholders.map(([k]) => k).sort()).toEqual([
      "ADMIN_TOKEN",
      "APP_SECRET",
      "ENCRYPTION_KEY",
      "WEBHOOK_VERIFY_TOKEN",
    ]);
    const filled = {
      ...env,
      ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64"),
      APP_SECRET: "s",
      ADMIN_TOKEN: "t",
      WEBHOOK_VERIFY_TOKEN: "v",
    };
    const config = parseConfig(filled);
    expect(config.host).toBe("127.0.0.1");
    expect(config.devMode).toBe(false);
    expect(config.backup.schedule).toBe("0 * * * *");
    // As CONTRACT 2 names it: the reverse proxy on this machine, on either loopback address.
    expect(env.TRUSTED_PROXIES).toBe("127.0.0.1,::1");
    // The recipe tells the operator to make every secret new.
    expect(docText).toContain("openssl rand -base64 32");
  });

  test("the recipe installs the files deploy/ ships, where the unit expects them", () => {
    for (const file of ["deploy/switchboard.service", "deploy/switchboard.env.example", "deploy/Caddyfile"])
      expect(docText).toContain(file);
    expect(docText).toContain("/etc/switchboard/switchboard.env");
    expect(docText).toContain("/etc/systemd/system/switchboard.service");
    expect(docText).toContain("TRUSTED_PROXIES");
  });
});
