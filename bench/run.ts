/**
 * `npm run bench`: runs every bench/*.bench.ts (or the ones named on the command line) and prints
 * each figure beside the baseline measured in the same run. Benchmarks are not tests: nothing
 * here passes or fails, the figures go into notes and the README.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface BenchFigure {
  name: string;
  value: number;
  unit: string;
  /** The comparison measured in the same run, when there is one. */
  baseline?: { name: string; value: number; unit: string };
  target?: string;
  note?: string;
}

export type Bench = () => Promise<BenchFigure[]>;

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort();

function format(value: number, unit: string): string {
  return `${Number.isInteger(value) ? value : value.toFixed(unit === 'ms' ? 1 : 3)} ${unit}`;
}

for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { default: Bench };
  process.stderr.write(`# ${file}\n`);
  for (const fig of await mod.default()) {
    const parts = [`${fig.name}: ${format(fig.value, fig.unit)}`];
    if (fig.baseline) parts.push(`baseline ${fig.baseline.name}: ${format(fig.baseline.value, fig.baseline.unit)}`);
    if (fig.target) parts.push(`target ${fig.target}`);
    if (fig.note) parts.push(fig.note);
    console.log(parts.join(' | '));
  }
}
