/**
 * A progress bar on a terminal (redrawn in place), or a line per finished step elsewhere (a log,
 * a CI job), for long work such as a move of millions of deliveries.
 */
export function progressBar(write: (text: string) => void, isTerminal: boolean, width = 30) {
  let total = 0;
  let done = 0;
  const steps = new Map<string, { rows: number; done: number }>();
  const stepOf = (name: string) => {
    const found = steps.get(name);
    if (!found) throw new Error(`progress of ${name}, a step that was not planned`);
    return found;
  };
  const draw = (step: string) => {
    const share = total === 0 ? 1 : done / total;
    const filled = Math.round(share * width);
    write(
      `\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}%  ${done.toLocaleString("en")}/${total.toLocaleString("en")} rows  ${step}\x1b[K`,
    );
  };
  return {
    planned(list: { name: string; rows: number }[]) {
      for (const { name, rows } of list) steps.set(name, { rows, done: 0 });
      total = list.reduce((sum, s) => sum + s.rows, 0);
      if (isTerminal) draw("");
    },
    copied(name: string, rows: number) {
      stepOf(name).done += rows;
      done += rows;
      if (isTerminal) draw(name);
    },
    finished(name: string) {
      if (!isTerminal)
        write(
          `${name}: ${stepOf(name).done.toLocaleString("en")} rows (${done.toLocaleString("en")}/${total.toLocaleString("en")})\n`,
        );
    },
    finish() {
      if (isTerminal) write("\n");
    },
  };
}
