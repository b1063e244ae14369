import type { Logger } from "../observability/logger.ts";
import type { Worker } from "./worker.ts";

/**
 * Runs `task` every `ms` while the server is up, and once more at stop (so pending state is
 * flushed). A failing run is logged, never fatal: the next tick tries again.
 */
export function intervalWorker(name: string, ms: number, task: () => unknown, logger: Logger): Worker {
  let timer: ReturnType<typeof setInterval> | undefined;
  const run = async () => {
    try {
      await task();
    } catch (error) {
      logger.error(`${name} failed`, { error });
    }
  };
  return {
    start() {
      timer ??= setInterval(run, ms);
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await run();
    },
  };
}
