import type { ChildReply } from "./snapshot-child.ts";
import { type Artifact, type ArtifactRequest, BackupStageError } from "./snapshot.ts";

/** How much of a dead child's standard error a failure quotes. */
const STDERR_QUOTED = 400;

/**
 * makeArtifact in a process of its own at the lowest priority (snapshot-child.ts), run as
 * `command backup-snapshot` (`command` runs this program: src/main.ts resolves it, as the compiled
 * binary runs itself): a `VACUUM INTO`, an integrity check and the compression of a large database
 * take tens of seconds of CPU, which the serving process's threads must never wait behind. The
 * child gets its request on standard input, which stays open while this process lives: it ends
 * with this process however this one ends. `signal` ends it (the server is stopping); a child that
 * ends without its answer (killed) fails the run, whose work files the caller removes.
 */
export function artifactInChild(
  command: readonly string[],
  request: ArtifactRequest,
  signal: AbortSignal,
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
      const [out, err, code] = await Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
        child.exited,
      ]);
      let reply: ChildReply | null = null;
      try {
        reply = JSON.parse(out) as ChildReply;
      } catch {
        // No answer: it was killed, or it crashed.
      }
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
