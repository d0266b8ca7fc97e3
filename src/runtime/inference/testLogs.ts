/**
 * Finding one model's log in an inference test's directory (RL_HOME/inference_tests/<test_id>/,
 * files `<n>-<model>.log`), safely: the test id is checked and the file must stay inside it.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { inferenceTestsRoot, TEST_ID_PATTERN } from '../../core/files/home.js';
import { NotFoundError, realChildDir, realFileWithin } from '../../core/files/safePath.js';
import { modelFileName } from './testRun.js';

export interface TestLog {
  /** The log's name in the test directory, e.g. `1-qwen_qwen3-8b.log`. */
  file: string;
  path: string;
}

const LOG_NAME = /^(\d+)-(.+)\.log$/;

/**
 * The log of `model` (an id as tested, e.g. qwen/qwen3-8b, or the log's file name) in test
 * `testId`; with one model tested, `model` may be left out. Refusals list the logs there are.
 */
export async function testLog(home: string, testId: string, model: string | undefined): Promise<TestLog> {
  if (!TEST_ID_PATTERN.test(testId)) {
    throw new UserError(`'${testId.slice(0, 100)}' is not a test id: test ids are 8 lowercase hex characters, as rl_test_inference returns.`, { field: 'test_id', expected: TEST_ID_PATTERN.source });
  }
  const root = inferenceTestsRoot(home);
  const realTest = realChildDir(root, testId, 'inference test');
  if (realTest === undefined) throw new NotFoundError(`Inference test '${testId}' not found in ${root}. Start one with rl_test_inference.`, { field: 'test_id', test_id: testId });
  const logs = (await readdir(realTest)).filter((name) => LOG_NAME.test(name)).sort((a, b) => Number(LOG_NAME.exec(a)![1]) - Number(LOG_NAME.exec(b)![1]));
  const file = model === undefined ? (logs.length === 1 ? logs[0] : undefined) : logs.find((name) => name === model || LOG_NAME.exec(name)![2] === modelFileName(model));
  if (file === undefined) {
    const which = model === undefined ? `Test '${testId}' has ${logs.length} model logs: name one with \`model\`` : `Test '${testId}' has no log for model '${model.slice(0, 200)}'`;
    throw new UserError(`${which} (a model id as tested, or a log file name). Available: ${logs.join(', ') || 'none yet'}.`, {
      field: 'model',
      expected: 'a model id as tested, or one of the available log files',
      available: logs,
    });
  }
  const path = realFileWithin(realTest, join(realTest, file), `log ${file} of inference test ${testId}`);
  if (path === undefined) throw new NotFoundError(`${file} of inference test '${testId}' is gone.`, { test_id: testId });
  return { file, path };
}
