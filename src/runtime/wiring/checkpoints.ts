/**
 * rl_checkpoints: a run's checkpoints as Tinker lists them (the Tinker training runs its tinker://
 * paths name, runs/usage.ts), what keeping them costs, and what to do with them. Tinker bills
 * storage per GB-month and tinker-atropos saves a sampler checkpoint at every step with no TTL, so
 * an old run costs money until its checkpoints go: `set_ttl` and `delete` act on the intermediate
 * ones (the run's trained weights always, the latest of each kind, the best by rl_evaluate and named
 * steps are kept), are described path by path, and are asked of the user first where the client
 * can be asked, or confirmed by naming them (`confirm_affected`); anything else changes nothing. `export` gives one checkpoint's archive URL and, when asked, publishes it.
 */
import { UserError } from '../../core/errors.js';
import { isDamaged, type RunRecord } from '../runs/seams/record.js';
import { frameworkOf } from '../runs/choice/frameworks.js';
import { failureSentence, type TinkerAnswer } from '../tinker/helper.js';
import { CHECKPOINTS_ANSWER, inOrder, listed, monthlyUsd, planAction, RESULTS_ANSWER, trainedWeights, type ListedCheckpoint, type PathResult, type TinkerCheckpoint } from '../tinker/checkpoints.js';
import { describePaths, parseTinkerPath, trainingRunIdsOf } from '../tinker/paths.js';
import type { Runtime } from './runtime.js';
import { whyNotConfirmed, type NotConfirmed } from './costs.js';

export type Confirmed = 'accept' | 'decline' | 'cancel' | 'unsupported';

/** How the tool asks its user and reports progress; the wiring never speaks MCP itself. */
export interface Asking {
  confirm(message: string, field: { name: string; title: string; description: string }): Promise<Confirmed>;
  progress(done: number, total: number, message: string): Promise<void>;
}

export interface CheckpointsRequest {
  run_id: string;
  action: 'list' | 'set_ttl' | 'delete' | 'export';
  keep?: { latest?: boolean; best?: boolean; steps?: number[] };
  steps?: number[];
  ttl_seconds?: number | null;
  step?: number;
  publish?: boolean;
  dry_run?: boolean;
  limit?: number;
  confirm_affected?: string[];
}

export interface CheckpointsAnswer {
  run_id: string;
  action: CheckpointsRequest['action'];
  checkpoints_total: number;
  size_bytes: number;
  monthly_cost_usd: number;
  message: string;
  checkpoints?: ListedCheckpoint[];
  shown?: number;
  best?: { path: string; label: string; score: number; eval_id: string };
  done?: boolean;
  confirmation?: Confirmed | 'not_asked' | 'argument';
  affected?: string[];
  affected_count?: number;
  affected_size_bytes?: number;
  affected_monthly_cost_usd?: number;
  kept?: { path: string; why: string }[];
  kept_count?: number;
  failed?: { path: string; error: string }[];
  expires_at?: string | null;
  path?: string;
  url?: string;
  url_expires_at?: string | null;
  published?: boolean;
}

/** Paths per helper call: each is one request to Tinker, and progress is sent between calls. */
const CHUNK = 100;
/** What of `affected`, `kept`, failures and a question an answer carries at most: it must stay far under 10k tokens. */
const AFFECTED_CHARS = 6000;
const SHOWN_KEPT = 20;
const SHOWN_FAILURES = 20;
const QUESTION_CHARS = 3000;

const gb = (bytes: number): string => `${Math.round((bytes / 1e9) * 1000) / 1000} GB`;
const sum = (cs: readonly TinkerCheckpoint[]): number => cs.reduce((n, c) => n + (c.size_bytes ?? 0), 0);

function tinkerOrRefuse<T>(answer: TinkerAnswer<T>, what: string): T {
  if (answer.ok) return answer.value;
  throw new UserError(`Could not ${what}: ${failureSentence(answer.error)}.`, { tinker_error: answer.error.kind, ...(answer.error.status !== null ? { status: answer.error.status } : {}) });
}

/** The run's record, its checkpoints on Tinker oldest first (its trained weights last) and the paths of those weights. */
async function runCheckpoints(runtime: Runtime, runId: string): Promise<{ record: RunRecord; checkpoints: TinkerCheckpoint[]; trained: string[] }> {
  const record = runtime.runs.get(runId);
  if (isDamaged(record)) throw new UserError(`Run '${runId}' has a damaged record (${record.damaged}), so its checkpoints cannot be found.`, { run_id: runId });
  const summary = await frameworkOf(record).readSummary(record);
  const ids = trainingRunIdsOf([...summary.checkpoints, summary.latest]);
  if (ids.length === 0) {
    throw new UserError(`Run '${runId}' has saved no Tinker checkpoint yet (its tinker:// paths name its Tinker training run). Wait for its first step (rl_wait_for_run until: "step").`, { run_id: runId });
  }
  const answer = await runtime.tinker.ask('checkpoints', { training_run_ids: ids }, CHECKPOINTS_ANSWER, { timeoutSeconds: 60 });
  const trained = trainedWeights(summary.latest);
  const checkpoints = inOrder(tinkerOrRefuse(answer, "list the run's checkpoints on Tinker").checkpoints, trained);
  // The storage a run holds, as Tinker just said it: rl_get_results shows this until its next question.
  runtime.runs.usage.recordStorage(runId, checkpoints);
  return { record, checkpoints, trained };
}

function totals(runId: string, action: CheckpointsRequest['action'], checkpoints: readonly TinkerCheckpoint[]) {
  const bytes = sum(checkpoints);
  return { run_id: runId, action, checkpoints_total: checkpoints.length, size_bytes: bytes, monthly_cost_usd: monthlyUsd(bytes) };
}

function listAnswer(runId: string, checkpoints: TinkerCheckpoint[], limit: number, best: CheckpointsAnswer['best']): CheckpointsAnswer {
  const shown = checkpoints.slice(-limit).map(listed);
  const head = totals(runId, 'list', checkpoints);
  const cut = shown.length < checkpoints.length ? ` The newest ${shown.length} are listed (limit); the totals count all ${checkpoints.length}.` : '';
  return {
    ...head,
    checkpoints: shown,
    shown: shown.length,
    ...(best ? { best } : {}),
    message: `${checkpoints.length} checkpoint(s) on Tinker, ${gb(head.size_bytes)}, $${head.monthly_cost_usd} a month to keep ($0.10/GB-month).${cut} rl_checkpoints({action: "delete" or "set_ttl"}) acts on the intermediate ones, keeping the latest and the best by rl_evaluate.`,
  };
}

/** Runs `act` on `paths` a chunk at a time; every path gets its result. */
async function inChunks(runtime: Runtime, asking: Asking, command: 'delete' | 'set_ttl', paths: string[], extra: Record<string, unknown>): Promise<PathResult[]> {
  const results: PathResult[] = [];
  for (let i = 0; i < paths.length; i += CHUNK) {
    const chunk = paths.slice(i, i + CHUNK);
    const answer = await runtime.tinker.ask(command, { paths: chunk, ...extra }, RESULTS_ANSWER, { timeoutSeconds: 120 });
    if (answer.ok) results.push(...answer.value.results);
    else results.push(...chunk.map((path) => ({ path, ok: false, error: answer.error })));
    await asking.progress(Math.min(i + CHUNK, paths.length), paths.length, `${command}: ${Math.min(i + CHUNK, paths.length)} of ${paths.length} checkpoints`);
  }
  return results;
}

/** The described paths while they fit; past that, cut, saying so (a pathological set of names does not fit any answer). */
function capped(lines: string[], count: number): string[] {
  const out: string[] = [];
  let left = AFFECTED_CHARS;
  for (const line of lines) {
    if (line.length > left) {
      out.push(`${line.slice(0, Math.max(0, left))}... (cut here: ${count} paths in all, too many to list in one answer)`);
      break;
    }
    out.push(line);
    left -= line.length;
  }
  return out;
}

function question(action: 'delete' | 'set_ttl', runId: string, targets: TinkerCheckpoint[], kept: { path: string; why: string }[], ttl: number | null | undefined): string {
  const what = action === 'delete' ? `Delete ${targets.length} checkpoint(s) of run ${runId} from Tinker for good` : `Let Tinker delete ${targets.length} checkpoint(s) of run ${runId} in ${ttl} s`;
  const text = `${what}? They hold ${gb(sum(targets))} ($${monthlyUsd(sum(targets))} a month): ${describePaths(targets.map((t) => t.path)).join('; ')}. Kept: ${kept.map((k) => `${k.path} (${k.why})`).join('; ') || 'none'}.`;
  return text.length <= QUESTION_CHARS ? text : `${text.slice(0, QUESTION_CHARS)}... (every path is in the answer)`;
}

const FIELDS = {
  delete: { name: 'delete', title: 'Delete these checkpoints', description: 'Yes deletes them from Tinker (it cannot be undone); no deletes nothing' },
  set_ttl: { name: 'expire', title: 'Let these checkpoints expire', description: 'Yes sets the TTL, after which Tinker deletes them; no changes nothing' },
  publish: { name: 'publish', title: 'Publish this checkpoint', description: 'Yes makes it public on Tinker; no leaves it private' },
};

/**
 * A destructive action's confirmation: `confirm_affected` naming exactly the paths it acts on now
 * (`argument`; anything else is a `mismatch`), else the user's answer where the client can ask.
 */
async function confirmed(asking: Asking, req: CheckpointsRequest, targets: TinkerCheckpoint[], message: string, field: (typeof FIELDS)['delete']): Promise<Confirmed | 'argument' | 'mismatch'> {
  if (req.confirm_affected === undefined) return asking.confirm(message, field);
  const named = new Set(req.confirm_affected);
  const exact = describePaths(targets.map((t) => t.path));
  return named.size === exact.length && exact.every((line) => named.has(line)) ? 'argument' : 'mismatch';
}

/** Why nothing was done, and the argument that confirms it (the model puts `affected` to its user, or decides). */
function notConfirmed(action: 'delete' | 'set_ttl', answer: NotConfirmed | 'mismatch', targets: TinkerCheckpoint[]): string {
  const why = answer === 'mismatch' ? 'confirm_affected does not name exactly what this call acts on now, which affected lists' : whyNotConfirmed(answer);
  const fits = describePaths(targets.map((t) => t.path)).join('').length <= AFFECTED_CHARS;
  const how = fits
    ? `To ${action === 'delete' ? 'delete' : 'expire'} exactly these, put affected to the user (or decide, if you act for them) and call again with the same arguments plus confirm_affected set to affected; if the user said no, do not.`
    : 'affected is too long to confirm in one call: act on fewer with steps.';
  return `not confirmed (${why}). ${how}`;
}

/** set_ttl / delete on the intermediate checkpoints. */
async function actOnIntermediate(runtime: Runtime, asking: Asking, req: CheckpointsRequest, checkpoints: TinkerCheckpoint[], trained: string[]): Promise<CheckpointsAnswer> {
  const action = req.action as 'delete' | 'set_ttl';
  if (action === 'set_ttl' && req.ttl_seconds === undefined) throw new UserError('set_ttl needs ttl_seconds: seconds until Tinker deletes each one (0 removes an expiry).', { field: 'ttl_seconds' });
  const best = req.keep?.best === false ? undefined : await runtime.evaluations.bestCheckpoint(req.run_id);
  const { targets, kept } = planAction(checkpoints, { latest: req.keep?.latest !== false, best: best?.path, steps: req.keep?.steps ?? [], trained }, req.steps);
  const affected = { affected: capped(describePaths(targets.map((t) => t.path)), targets.length), affected_count: targets.length, affected_size_bytes: sum(targets), affected_monthly_cost_usd: monthlyUsd(sum(targets)), kept: kept.slice(0, SHOWN_KEPT), kept_count: kept.length };
  const head = { ...totals(req.run_id, action, checkpoints), ...affected };
  const verb = action === 'delete' ? 'deleted' : 'given a TTL';
  if (targets.length === 0) return { ...head, done: false, confirmation: 'not_asked', message: `Nothing to do: every checkpoint of the run is kept (${kept.length}) or outside steps.` };
  if (req.dry_run) return { ...head, done: false, confirmation: 'not_asked', message: `Dry run: ${targets.length} checkpoint(s) would be ${verb} (affected); nothing was changed.` };
  // Removing an expiry destroys nothing: only a deletion or a TTL is confirmed.
  const destructive = action === 'delete' || req.ttl_seconds !== null;
  const confirmation = destructive ? await confirmed(asking, req, targets, question(action, req.run_id, targets, kept, req.ttl_seconds), FIELDS[action]) : 'not_asked';
  if (confirmation !== 'accept' && confirmation !== 'argument' && confirmation !== 'not_asked') {
    return { ...head, done: false, confirmation: confirmation === 'mismatch' ? 'not_asked' : confirmation, message: `Nothing was ${verb}: ${notConfirmed(action, confirmation, targets)}` };
  }
  const results = await inChunks(runtime, asking, action, targets.map((t) => t.path), action === 'set_ttl' ? { ttl_seconds: req.ttl_seconds } : {});
  return { ...head, confirmation, ...outcome(runtime, req, action, checkpoints, results) };
}

function outcome(runtime: Runtime, req: CheckpointsRequest, action: 'delete' | 'set_ttl', checkpoints: TinkerCheckpoint[], results: PathResult[]): Partial<CheckpointsAnswer> & { message: string } {
  const ok = new Set(results.filter((r) => r.ok).map((r) => r.path));
  const failed = results.filter((r) => !r.ok).map((r) => ({ path: r.path, error: r.error ? `${r.error.kind}${r.error.status !== null ? ` ${r.error.status}` : ''}: ${r.error.message}` : 'failed' }));
  if (action === 'delete') runtime.runs.usage.recordStorage(req.run_id, checkpoints.filter((c) => !ok.has(c.path)));
  const expires = action === 'set_ttl' && req.ttl_seconds != null ? new Date(Date.now() + req.ttl_seconds * 1000).toISOString() : null;
  const verb = action === 'delete' ? 'Deleted' : req.ttl_seconds === null ? 'Removed the expiry of' : `Set a TTL of ${req.ttl_seconds} s (expiring about ${expires}) on`;
  return {
    done: ok.size > 0,
    affected: capped(describePaths([...ok]), ok.size),
    affected_count: ok.size,
    ...(action === 'set_ttl' ? { expires_at: expires } : {}),
    ...(failed.length ? { failed: failed.slice(0, SHOWN_FAILURES) } : {}),
    message: `${verb} ${ok.size} checkpoint(s) (affected lists them)${failed.length ? `; ${failed.length} failed (failed)` : ''}.`,
  };
}

/** export: one checkpoint's archive URL (the latest sampler one unless `step`), published when asked. */
async function exportOne(runtime: Runtime, asking: Asking, req: CheckpointsRequest, checkpoints: TinkerCheckpoint[]): Promise<CheckpointsAnswer> {
  const pick = (cs: TinkerCheckpoint[]) => cs.filter((c) => c.kind === 'sampler').at(-1) ?? cs.at(-1);
  const chosen = req.step === undefined ? pick(checkpoints) : pick(checkpoints.filter((c) => parseTinkerPath(c.path)?.step === req.step));
  if (chosen === undefined) {
    throw new UserError(`Run '${req.run_id}' has no checkpoint at step ${req.step} on Tinker.`, { available_steps: [...new Set(checkpoints.map((c) => parseTinkerPath(c.path)?.step))].filter((s) => s !== undefined).slice(-50) });
  }
  const [archive] = tinkerOrRefuse(await runtime.tinker.ask('archive_url', { paths: [chosen.path] }, RESULTS_ANSWER, { timeoutSeconds: 240 }), 'get the archive URL').results;
  if (!archive?.ok) throw new UserError(`Tinker gave no archive of ${chosen.path}: ${archive?.error?.message ?? 'no answer'}.`, { path: chosen.path });
  const head = { ...totals(req.run_id, 'export', checkpoints), path: chosen.path, url: archive.url!, url_expires_at: archive.expires ?? null };
  if (!req.publish) return { ...head, published: chosen.public, message: `Download ${chosen.path} from url (a signed link, valid until url_expires_at): a tar archive of the LoRA weights and their config.` };
  const confirmation = chosen.public ? 'not_asked' : await asking.confirm(`Publish ${chosen.path} (run ${req.run_id}) on Tinker? Anyone with its path can then use and download it.`, FIELDS.publish);
  if (confirmation === 'decline' || confirmation === 'cancel') return { ...head, published: false, confirmation, message: `Not published: not confirmed (${whyNotConfirmed(confirmation)}). The archive URL is in url.` };
  const [published] = tinkerOrRefuse(await runtime.tinker.ask('publish', { paths: [chosen.path] }, RESULTS_ANSWER, { timeoutSeconds: 60 }), 'publish the checkpoint').results;
  if (!published?.ok) throw new UserError(`Tinker did not publish ${chosen.path}: ${published?.error?.message ?? 'no answer'}.`, { path: chosen.path });
  return { ...head, published: true, confirmation, message: `${published.already_public ? 'Already public' : 'Published'}: ${chosen.path}; the archive URL is in url.` };
}

export async function checkpointsAction(runtime: Runtime, asking: Asking, req: CheckpointsRequest): Promise<CheckpointsAnswer> {
  const { checkpoints, trained } = await runCheckpoints(runtime, req.run_id);
  switch (req.action) {
    case 'list':
      return listAnswer(req.run_id, checkpoints, req.limit ?? 50, await runtime.evaluations.bestCheckpoint(req.run_id));
    case 'export':
      return exportOne(runtime, asking, req, checkpoints);
    default:
      return actOnIntermediate(runtime, asking, req, checkpoints, trained);
  }
}
