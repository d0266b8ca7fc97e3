/**
 * rl_read_log: bounded reading of a training run's process log or an inference test model's log,
 * for clients that reach resources poorly. The same files the `rl://` log resources serve.
 */
import { UserError } from '../../core/errors.js';
import { RUN_PROCESSES, runLogFile, type RunProcess } from '../../core/files/home.js';
import { readLogLines, type LogLines } from '../../core/files/logLines.js';
import { inferenceTestFileUri, runLogUri } from '../../core/resourceUris.js';
import { testLog } from '../inference/testLogs.js';
import { RunFiles } from '../runs/registry/runFiles.js';
import type { Runtime } from './runtime.js';

export interface LogRequest {
  run_id?: string;
  test_id?: string;
  process?: RunProcess;
  model?: string;
  lines: number;
  offset?: number;
  grep?: string;
}

export type LogAnswer = {
  run_id?: string;
  test_id?: string;
  process?: RunProcess;
  log_file: string;
  uri: string;
  grep?: string;
  note?: string;
} & LogLines;

function refuse(message: string, field: string, expected: string): never {
  throw new UserError(message, { field, expected });
}

/** Which file the request names: exactly one of run_id and test_id, with the arguments that go with it. */
async function locate(runtime: Runtime, req: LogRequest): Promise<{ path: string; uri: string; who: Partial<LogAnswer> }> {
  if ((req.run_id === undefined) === (req.test_id === undefined)) {
    refuse('Name exactly one log owner: run_id (a training run, with process) or test_id (an inference test, with model).', 'run_id', 'exactly one of run_id, test_id');
  }
  if (req.run_id !== undefined) {
    if (req.model !== undefined) refuse('`model` names an inference test\'s log; a run\'s logs are chosen with `process`.', 'model', `with run_id: process, one of ${RUN_PROCESSES.join(', ')}`);
    const process = req.process ?? 'trainer';
    const path = await new RunFiles(runtime.settings.home).file(req.run_id, runLogFile(process));
    return { path, uri: runLogUri(req.run_id, process), who: { run_id: req.run_id, process } };
  }
  if (req.process !== undefined) refuse('`process` names a training run\'s log; an inference test\'s logs are chosen with `model`.', 'process', 'with test_id: model, a model id as tested');
  const log = await testLog(runtime.settings.home, req.test_id!, req.model);
  return { path: log.path, uri: inferenceTestFileUri(req.test_id!, log.file), who: { test_id: req.test_id! } };
}

function noteOf(req: LogRequest, read: LogLines): string | undefined {
  const what = req.grep === undefined ? 'lines' : `lines containing '${req.grep}'`;
  if (read.scan_limited) return `Looked through ${read.scanned_bytes} bytes without finding ${req.lines} ${what}; read on from next_offset, or narrow grep.`;
  if (!read.truncated) return undefined;
  if (req.offset === undefined) return `Earlier ${what} exist: read from offset 0 (or another offset before first_offset ${read.first_offset}) to page forward.`;
  return `More follows: call again with offset ${read.next_offset}.`;
}

export async function readLog(runtime: Runtime, req: LogRequest): Promise<LogAnswer> {
  const { path, uri, who } = await locate(runtime, req);
  const read = await readLogLines(path, { offset: req.offset, lines: req.lines, grep: req.grep }, runtime.redactor);
  const note = noteOf(req, read);
  return { ...who, log_file: path, uri, ...(req.grep !== undefined ? { grep: req.grep } : {}), ...read, ...(note ? { note } : {}) } as LogAnswer;
}
