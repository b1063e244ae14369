import type { ChildReply, ChildStep } from "./snapshot-child.ts";
import { type Artifact, type ArtifactRequest, BackupStageError, type BackupStep } from "./snapshot.ts";

/** How much of a dead child's standard error a failure quotes. */
const STDERR_QUOTED = 400;

/**
 * makeArtifact in a process of its own below the server's priority (snapshot-child.ts), run as
 * `command backup-snapshot` (`command` runs this program: src/main.ts resolves it, as the compiled
 * binary runs itself): a `VACUUM INTO`, an integrity check and the compression of a large database
 * take tens of seconds of CPU, which the serving process's threads must never wait behind. The
 * child gets its request on standard input, which stays open while this process lives: it ends
 * with this process however this one ends. `step` hears of each step it begins. `signal` ends it
 * (the server is stopping); a child that ends without its answer (killed) fails the run, whose work
 * files the caller removes.
 */
export function artifactInChild(
  command: readonly string[],
  request: ArtifactRequest,
  signal: AbortSignal,
  step: (next: BackupStep) => void = () => {},
): Promise<Artifact> {
  if (signal.aborted) return Promise.reject(new BackupStageError("snapshot", "stopped: the server is shutting down"));
  // Nothing of the environment (secrets above all): the child reads no configuration.
  const child = Bun.spawn([...command, "backup-snapshot"], {
    env: { PATH: process.env.PATH ?? "" },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stop = () => child.kill("SIGKILL");
  signal.addEventListener("abort", stop);
  child.stdin.write(`${JSON.stringify(request)}\n`);
  child.stdin.flush();
  return (async () => {
    try {
      const [reply, err, code] = await Promise.all([
        lastLine(child.stdout, step),
        new Response(child.stderr).text(),
        child.exited,
      ]);
      if (reply && "artifact" in reply && code === 0) return reply.artifact;
      if (reply && "stage" in reply) throw new BackupStageError(reply.stage, reply.error);
      if (signal.aborted) throw new BackupStageError("snapshot", "stopped: the server is shutting down");
      const how = child.signalCode ? `was killed (${child.signalCode})` : `exited with code ${code}`;
      const said = err.trim().slice(-STDERR_QUOTED).replace(/\s+/g, " ");
      throw new BackupStageError("snapshot", `the backup's process ${how}${said ? `: ${said}` : ""}`);
    } finally {
      signal.removeEventListener("abort", stop);
      child.stdin.end();
    }
  })();
}

/** Reads the child's lines as they come, telling `step` of each ChildStep; its reply, or null when it gave none. */
async function lastLine(
  stdout: ReadableStream<Uint8Array>,
  step: (next: BackupStep) => void,
): Promise<ChildReply | null> {
  const decoder = new TextDecoder();
  let pending = "";
  let reply: ChildReply | null = null;
  const take = (line: string) => {
    if (line === "") return;
    try {
      const message = JSON.parse(line) as ChildReply | ChildStep;
      if ("step" in message) step(message.step);
      else reply = message;
    } catch {
      // Not a line of ours (cut off by a kill): no answer.
    }
  };
  const reader = stdout.getReader();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    pending += decoder.decode(chunk.value, { stream: true });
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) take(line);
  }
  take(pending);
  return reply;
}
