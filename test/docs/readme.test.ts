import { expect, test } from "bun:test";
import { ROOT } from "../support/process.ts";

// Issue 35: the README is what a newcomer reads in five minutes; everything else is in docs/.

const readme = await Bun.file(`${ROOT}/README.md`).text();

test("the README stays short: at most 200 lines, with the two commands, the demo and production in six steps", () => {
  expect(readme.split("\n").length).toBeLessThanOrEqual(200);
  expect(readme).toContain("npm ci && npm run dev");
  expect(readme).toContain("npm ci && npm test");
  const steps = readme.slice(readme.indexOf("## Production in six steps"));
  for (const n of [1, 2, 3, 4, 5, 6]) expect(steps).toContain(`\n${n}. **`);
  expect(steps).not.toContain("\n7. ");
});

test("the README names every part the one port serves, the operator console included, and points to docs/", () => {
  for (const path of [
    "/{version}/",
    "/webhooks/upstream",
    "/dashboard",
    "/api/*",
    "/operator",
    "/admin/*",
    "/docs",
    "/healthz",
    "/metrics",
  ])
    expect(readme).toContain(`\`${path}`);
  expect(readme).toContain("](docs/README.md)");
  expect(readme).toContain("](docs/deploy-vps.md)");
  expect(readme).toContain("](docs/backups.md");
});
