/** Schema pieces shared by the run tools (rl_start_training, rl_check_status, rl_stop_training, rl_list_runs, rl_get_results). */
import { z } from 'zod';
import { RUN_ID_PATTERN } from '../../core/home.js';
import { RUN_STATUSES } from '../../domain/runs/record.js';

export const runIdInput = z.string().regex(RUN_ID_PATTERN, 'a run_id is 8 lowercase hex characters, as returned by rl_start_training or listed by rl_list_runs').describe('Run id from rl_start_training or rl_list_runs');

export const runStatus = z.enum(RUN_STATUSES);

export const perProcess = <T extends z.ZodType>(item: T) => z.object({ api: item, trainer: item, env: item });

export const processLogs = perProcess(z.string()).describe('Log file of each process');
export const processLogUris = perProcess(z.string()).describe('The same logs as MCP resources (rl://runs/<id>/logs/<process>)');
