/**
 * The gold answers of the gsm8k environments (the bundled example, the upstream-style test
 * environment and the fake verifiers one), so the fake endpoint can answer their questions right or wrong on purpose. Read
 * with Python's `ast` (no import: nothing of the envs runs).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { BUNDLED_EXAMPLES_ROOT } from '../../src/core/files/paths.js';
import { FAKE_VERIFIERS_ENVIRONMENTS_DIR, TEST_ENVIRONMENTS_DIR } from '../helpers/tmp.js';
import type { ChatMessage } from './openaiServer.js';

export const GSM8K_FILE = join(BUNDLED_EXAMPLES_ROOT, 'tinker_atropos', 'environments', 'gsm8k_tinker.py');
const TEST_GSM8K_FILE = join(TEST_ENVIRONMENTS_DIR, 'gsm8k_server.py');
/** The verifiers gsm8k environment a cookbook install has. */
const VERIFIERS_GSM8K_FILE = join(FAKE_VERIFIERS_ENVIRONMENTS_DIR, 'gsm8k', '__init__.py');

const READ_PROBLEMS = `
import ast, json, sys
rows = []
for path in sys.argv[1:]:
    for node in ast.parse(open(path).read()).body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if any(getattr(t, "id", "") in ("TRAIN_PROBLEMS", "TEST_PROBLEMS") for t in targets):
            rows += ast.literal_eval(node.value)
print(json.dumps({r["question"]: r["answer"].split("####")[-1].strip() for r in rows}))
`;

/** A `solve` for startFakeOpenAI: the gold answer of the last user message. */
export function gsm8kSolver(python = 'python3'): (messages: ChatMessage[]) => string | undefined {
  const answers = new Map(Object.entries(JSON.parse(execFileSync(python, ['-c', READ_PROBLEMS, GSM8K_FILE, TEST_GSM8K_FILE, VERIFIERS_GSM8K_FILE], { encoding: 'utf8' })) as Record<string, string>));
  if (answers.size === 0) throw new Error(`no problems found in ${GSM8K_FILE} or ${TEST_GSM8K_FILE}`);
  return (messages) => answers.get([...messages].reverse().find((m) => m.role === 'user')?.content ?? '');
}
