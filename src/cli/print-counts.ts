/** One line per table, its rows aligned: what migrate copied, what restore restored. */
export function printCounts(counts: Record<string, number>): void {
  const width = Math.max(...Object.keys(counts).map((name) => name.length));
  for (const [table, rows] of Object.entries(counts))
    console.log(`  ${table.padEnd(width)}  ${rows.toLocaleString("en")}`);
}
