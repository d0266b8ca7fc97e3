/**
 * Every requirement for training (src/runtime/setup/requirements.ts, the list a start refuses by),
 * checked at once and each failure paired with its fix: what `rl_doctor` and
 * `rl-training-mcp doctor` report. Hermes hid its tools when keys were missing and never checked
 * the install at all; an agent (or a person) needs the whole list to fix it in one go.
 */
import type { Settings } from '../../core/settings.js';
import type { DiscoveryReport } from '../environments/report.js';
import type { RunSelection } from '../runs/seams/framework.js';
import { frameworkFor } from '../runs/choice/frameworks.js';
import { assessRequirements, type SelectedForChecks, startContext } from '../setup/requirements.js';
import type { WandbAccess } from '../wandb/reader.js';
import type { Runtime } from './runtime.js';

export interface DoctorCheck {
  check: string;
  ok: boolean;
  /** False for what only some tools need (e.g. OPENROUTER_API_KEY for rl_test_inference). */
  required: boolean;
  detail: string;
  /** The sentence rl_start_training refuses with when this check fails. */
  fix?: string;
}

export interface DoctorReport {
  /** True when rl_start_training would get past every check here. */
  ready: boolean;
  checks: DoctorCheck[];
  summary: string;
}

/** The pieces of the server the doctor reads. */
export interface DoctorSources {
  settings: Settings;
  /** Ids of the runs active on this host. */
  activeRuns(): string[];
  /** The selected config's values, when an environment is selected: they decide whether W&B is used. */
  selected(): SelectedForChecks | undefined;
  scanEnvironments(): Promise<DiscoveryReport>;
  checkWandbAccess(signal?: AbortSignal): Promise<WandbAccess>;
}

/** The base model a run of the selection trains, as its framework prices it (a cookbook recipe's own model_name unless the operator locks it); undefined when it cannot say. */
function trainedModelOf(settings: Settings, selection: RunSelection): string | undefined {
  try {
    const { model } = frameworkFor(selection).estimate(settings, selection);
    return model === 'unknown' ? undefined : model;
  } catch {
    return undefined;
  }
}

export function doctorSources(runtime: Runtime): DoctorSources {
  return {
    settings: runtime.settings,
    activeRuns: () => runtime.runs.activeRuns().map((r) => r.run_id),
    selected: () => {
      const current = runtime.selection.current();
      if (current === undefined) return undefined;
      const model = trainedModelOf(runtime.settings, current);
      return { file: current.environment.file_path, values: current.values, tinker: current.tinker, ...(current.environment.recipe !== undefined ? { recipe: current.environment.recipe } : {}), ...(model !== undefined ? { model } : {}) };
    },
    scanEnvironments: () => runtime.environments.scan(),
    checkWandbAccess: (signal) => runtime.wandb.checkAccess(signal),
  };
}

export async function runDoctor(sources: DoctorSources, signal?: AbortSignal): Promise<DoctorReport> {
  const { settings, activeRuns, scanEnvironments, checkWandbAccess } = sources;
  const ctx = { ...startContext(settings, sources.selected(), signal), activeRuns, scanEnvironments, checkWandbAccess };
  const checks: DoctorCheck[] = (await assessRequirements(ctx)).map((a) =>
    a.ok ? { check: a.check, ok: true, required: a.required, detail: a.detail } : { check: a.check, ok: false, required: a.required, detail: a.detail, fix: a.message },
  );
  const blocking = checks.filter((c) => !c.ok && c.required);
  const ready = blocking.length === 0;
  const summary = ready
    ? 'Training can start: every required check passed.'
    : `Training cannot start: ${blocking.length} required check(s) failed (${blocking.map((c) => c.check).join(', ')}). Apply each fix, then run the doctor again.`;
  return { ready, checks, summary };
}

/** The report as a person reads it in a terminal. */
export function formatDoctorReport(report: DoctorReport, settings: Settings): string {
  const width = Math.max(...report.checks.map((c) => c.check.length));
  const lines = [`rl-training-mcp doctor  (root ${settings.root}${settings.usingBundledExamples ? ', the bundled examples' : ''}; RL_HOME ${settings.home})`, ''];
  for (const c of report.checks) {
    const mark = c.ok ? 'ok  ' : c.required ? 'FAIL' : 'warn';
    lines.push(`  ${mark}  ${c.check.padEnd(width)}  ${c.detail}`);
    if (c.fix) lines.push(`        ${' '.repeat(width)}  fix: ${c.fix}`);
  }
  lines.push('', report.summary, '');
  return lines.join('\n');
}
