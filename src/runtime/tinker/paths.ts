/**
 * tinker:// checkpoint paths: `tinker://<training run id>/weights/<name>` (save_state, resumable)
 * and `tinker://<training run id>/sampler_weights/<name>` (save_weights_for_sampler). A training
 * run id is `<session id>:train:<n>`, so a run's paths name the Tinker training runs and sessions
 * its usage is billed to. Pure.
 */

export type CheckpointKind = 'state' | 'sampler';

export interface TinkerPath {
  path: string;
  training_run_id: string;
  kind: CheckpointKind;
  name: string;
  /** The number a name ends with (`step_12` -> 12, `000080` -> 80); undefined when none. */
  step?: number;
}

const PATH = /^tinker:\/\/([^/\s]+)\/(weights|sampler_weights)\/([^/\s]+)$/;
const TRAILING_NUMBER = /^(.*?)(\d+)$/;

export function parseTinkerPath(path: string): TinkerPath | undefined {
  const m = PATH.exec(path);
  if (m === null) return undefined;
  const number = TRAILING_NUMBER.exec(m[3]!);
  return { path, training_run_id: m[1]!, kind: m[2] === 'weights' ? 'state' : 'sampler', name: m[3]!, ...(number ? { step: Number(number[2]) } : {}) };
}

/** The distinct training runs `paths` belong to, in order of first appearance. */
export function trainingRunIdsOf(paths: readonly (string | null | undefined)[]): string[] {
  const ids = paths.flatMap((p) => (p ? [parseTinkerPath(p)?.training_run_id] : [])).filter((id): id is string => id !== undefined);
  return [...new Set(ids)];
}

/** The session a training run id names (`<session id>:train:<n>`), when it has that form. */
export function sessionOf(trainingRunId: string): string | undefined {
  const at = trainingRunId.indexOf(':train:');
  return at > 0 ? trainingRunId.slice(0, at) : undefined;
}

/** `[1, 2, 3, 5]` -> `1..3,5`. */
function ranges(numbers: number[], width: number): string {
  const pad = (n: number): string => String(n).padStart(width, '0');
  const parts: string[] = [];
  for (let i = 0; i < numbers.length; ) {
    let j = i;
    while (j + 1 < numbers.length && numbers[j + 1] === numbers[j]! + 1) j++;
    parts.push(j === i ? pad(numbers[i]!) : `${pad(numbers[i]!)}..${pad(numbers[j]!)}`);
    i = j + 1;
  }
  return parts.join(',');
}

/**
 * Every path of `paths`, exactly and briefly: paths that differ only in the number their name ends
 * with are written once, `tinker://<run>/sampler_weights/step_{1..24,26}` (a..b: each number from a
 * to b). A run saves a checkpoint per step, so a list of paths would be thousands of lines.
 */
export function describePaths(paths: readonly string[]): string[] {
  const groups = new Map<string, { head: string; width: number; numbers: number[] }>();
  const single: string[] = [];
  for (const path of new Set(paths)) {
    const slash = path.lastIndexOf('/');
    const m = TRAILING_NUMBER.exec(path.slice(slash + 1));
    if (m === null) {
      single.push(path);
      continue;
    }
    const digits = m[2]!;
    const width = digits.length > 1 && digits.startsWith('0') ? digits.length : 0;
    const head = `${path.slice(0, slash + 1)}${m[1]!}`;
    const key = `${head}\0${width}`;
    const group = groups.get(key) ?? { head, width, numbers: [] };
    group.numbers.push(Number(digits));
    groups.set(key, group);
  }
  const lines = [...groups.values()].map(({ head, width, numbers }) => {
    const sorted = [...new Set(numbers)].sort((a, b) => a - b);
    return sorted.length === 1 ? `${head}${String(sorted[0]).padStart(width, '0')}` : `${head}{${ranges(sorted, width)}}`;
  });
  return [...lines, ...single];
}
