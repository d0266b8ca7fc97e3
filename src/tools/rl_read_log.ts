/** rl_read_log: bounded, redacted reading of a run's or an inference test's log, as a tool. */
import * as z from 'zod';
import { zString, zInt, zBoolean } from '../core/schemaLeaves.js';
import { readLog } from '../runtime/wiring/logs.js';
import { RUN_PROCESSES, TEST_ID_PATTERN } from '../core/files/home.js';
import { DEFAULT_LOG_LINES, MAX_LOG_LINES } from '../core/files/logLines.js';
import { defineTool } from './define.js';
import { runIdInput } from './runSchemas.js';

export const rlReadLog = defineTool({
  name: 'rl_read_log',
  title: 'Read a log',
  description:
    "Reads a log: a training run's (run_id, process) or an inference test model's (test_id, model). Default the last `lines` lines; with offset, forward from there (pass next_offset back to follow it). grep keeps matching lines. Secrets are redacted. Read-only.",
  input: z
    .object({
      run_id: runIdInput.optional(),
      test_id: zString.regex(TEST_ID_PATTERN, 'a test_id is 8 lowercase hex characters, as rl_test_inference returns').optional().describe('Inference test id'),
      process: z.enum(RUN_PROCESSES).optional().describe('With run_id (default trainer)'),
      model: zString.min(1).max(200).optional().describe('With test_id: the model id as tested'),
      lines: zInt.min(1).max(MAX_LOG_LINES).default(DEFAULT_LOG_LINES).describe('Lines to return'),
      offset: zInt.min(0).optional().describe('Read forward from here (a next_offset); absent: the tail'),
      grep: zString.min(1).max(200).optional().describe('Only lines containing this (case-insensitive)'),
    })
    .strict(),
  output: z.object({
    run_id: zString.optional(),
    test_id: zString.optional(),
    process: z.enum(RUN_PROCESSES).optional(),
    log_file: zString,
    uri: zString.describe('The same log as an MCP resource'),
    grep: zString.optional(),
    lines: z.array(zString),
    first_offset: zInt.describe('Byte offset of the first line returned'),
    next_offset: zInt.describe('Pass as offset to read what follows'),
    size: zInt.describe('Bytes in the log when read'),
    truncated: zBoolean.describe('Lines were left out: earlier ones (tail) or later ones (with offset)'),
    scanned_bytes: zInt,
    scan_limited: zBoolean.describe('The call stopped reading (8 MiB) before finding `lines` lines'),
    note: zString.optional(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (args, { runtime }) => readLog(runtime, args),
});
