/** The stress runner's flags, read into options or one line naming the flag and its rule. */
export interface StressOptions {
  runs: number;
  parallel: number;
  busy: number;
  env: Record<string, string>;
  out: string | null;
  testArgs: string[];
}

const USAGE =
  "usage: bun test/stress/run.ts [--runs N] [--parallel N] [--busy N] [--env K=V] [--out DIR] -- <bun test args>";

function count(flag: string, value: string | undefined, min: number): number | string {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < min) return `${flag} takes a whole number of at least ${min}`;
  return n;
}

export function parseStressArgs(argv: string[], cores: number): StressOptions | { error: string } {
  const options: StressOptions = { runs: 20, parallel: 2, busy: cores, env: {}, out: null, testArgs: [] };
  const split = argv.indexOf("--");
  if (split < 0 || split === argv.length - 1) return { error: `${USAGE}\n(no test given after --)` };
  options.testArgs = argv.slice(split + 1);
  const flags = argv.slice(0, split);
  for (let i = 0; i < flags.length; i += 2) {
    const flag = flags[i] ?? "";
    const value = flags[i + 1];
    if (flag === "--env") {
      const eq = value?.indexOf("=") ?? -1;
      if (!value || eq < 1) return { error: "--env takes KEY=VALUE" };
      options.env[value.slice(0, eq)] = value.slice(eq + 1);
      continue;
    }
    if (flag === "--out") {
      if (!value) return { error: "--out takes a folder" };
      options.out = value;
      continue;
    }
    const key = { "--runs": "runs", "--parallel": "parallel", "--busy": "busy" }[flag] as
      | "runs"
      | "parallel"
      | "busy"
      | undefined;
    if (!key) return { error: `unknown flag ${flag}\n${USAGE}` };
    const n = count(flag, value, key === "busy" ? 0 : 1);
    if (typeof n === "string") return { error: n };
    options[key] = n;
  }
  return options;
}
