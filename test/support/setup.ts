import { setDefaultTimeout } from "bun:test";

// Tests that start processes (the CLI, the server, the compiled binary, a browser) take seconds on
// a loaded 2-core CI machine; Bun's 5 s default would fail them for being slow, not wrong.
setDefaultTimeout(60_000);
