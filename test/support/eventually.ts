/**
 * Reads `read` until it gives `expected` or `withinMs` passes, and returns the last value: for a
 * state written after an answer went out (the proxy records upstream's state changes once the
 * caller has its answer), which a networked database commits a moment later.
 */
export async function eventually<T>(read: () => Promise<T>, expected: T, withinMs = 1_000): Promise<T> {
  const until = performance.now() + withinMs;
  let value = await read();
  while (value !== expected && performance.now() < until) {
    await Bun.sleep(2);
    value = await read();
  }
  return value;
}
