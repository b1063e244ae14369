import { StoreUnavailableError } from "../errors.ts";

/** Bun's own codes for a connection that could not be made or was lost. */
const LOST_CONNECTION = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
]);

/**
 * The server's SQLSTATEs for "not now": connection exceptions (class 08), too many connections,
 * and a server shutting down, restarting or still starting.
 */
const SERVER_UNAVAILABLE = /^(08...|53300|57P01|57P02|57P03)$/;

/** Whether `error` means the database could not be reached, rather than a fault of the statement. */
export function isUnavailable(error: unknown): boolean {
  // drizzle wraps the driver's error in its own ("Failed query: …"), with the driver's as the cause.
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof StoreUnavailableError) return true;
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    if (typeof code === "string" && LOST_CONNECTION.has(code)) return true;
    if (typeof errno === "string" && SERVER_UNAVAILABLE.test(errno)) return true;
  }
  return false;
}

function translated(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !isUnavailable(error)) return error;
  return new StoreUnavailableError(`PostgreSQL is unavailable: ${(error as Error).message}`, { cause: error });
}

/**
 * Makes every promise `target`'s methods return reject with StoreUnavailableError when the
 * database could not be reached (ingress answers 503, the proxy 502): the one place where the
 * backend's connection errors become the seam's. Each method becomes an own property of `target`
 * wrapping its class's, so the synchronous reads of the proxy's hot path stay plain calls.
 */
export function unavailableAsStoreError<T extends object>(target: T): T {
  const methods = new Map<string, (...args: unknown[]) => unknown>();
  for (
    let proto = Object.getPrototypeOf(target);
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
      // Methods only (not getters), the most derived class's first.
      if (name !== "constructor" && typeof descriptor.value === "function" && !methods.has(name))
        methods.set(name, descriptor.value);
    }
  }
  for (const [name, method] of methods) {
    (target as Record<string, unknown>)[name] = (...args: unknown[]) => {
      const result = method.apply(target, args);
      return result instanceof Promise ? result.catch((error) => Promise.reject(translated(error))) : result;
    };
  }
  return target;
}
