export type Level = "debug" | "info" | "warn" | "error";
export type Fields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
}

const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

// Field names whose values are never written, at any depth.
const SECRET_NAME = /(authorization|password|secret|token|api_?key|^key$|cookie|signature|encryption)/i;
// Values that look like our keys or signing secrets are masked wherever they appear.
const SECRET_VALUE = /(px_(?:live|test)_[A-Za-z0-9_-]{4})[A-Za-z0-9_-]+|whsec_[A-Za-z0-9+/=]+/g;

export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === "string")
    return value.replace(SECRET_VALUE, (_m, keyPrefix?: string) => (keyPrefix ? `${keyPrefix}…` : "whsec_…"));
  if (value instanceof Error) return { name: value.name, message: redact(value.message, depth + 1) };
  if (value === null || typeof value !== "object" || depth > 5) return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_NAME.test(k) ? "[redacted]" : redact(v, depth + 1);
  return out;
}

/** JSON lines with secrets redacted. `write` is injectable so tests can read what was logged. */
export function createLogger(
  level: Level = "info",
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Logger {
  const emit = (lvl: Level, msg: string, fields?: Fields) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const record = redact(fields ?? {}) as Fields;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...record }));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}

/** A logger that keeps its lines, for tests. */
export function memoryLogger(): Logger & { lines: Fields[] } {
  const lines: Fields[] = [];
  const logger = createLogger("debug", (line) => lines.push(JSON.parse(line) as Fields));
  return Object.assign(logger, { lines });
}
