/**
 * One inference test: every requested model run through `<env file> process` against the
 * endpoint, a few at a time, each in its own files under RL_HOME/inference_tests/<test_id>/.
 * The test lives on between tool calls, so a call can return while it runs (one Hermes
 * call could last 3 x 600 s, far beyond what any client waits).
 */
import { EventEmitter } from 'node:events';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Logger } from '../../core/logger.js';
import type { SecretRedactor } from '../../core/redact.js';
import type { Settings } from '../../core/settings.js';
import { endpointEntry, processCommand, processEnv, type KeyConfig, type ServerType } from './command.js';
import { ModelProcess, type ModelProcessOutcome } from './modelProcess.js';
import type { TestModel } from './models.js';
import { scoreGroups, summarize } from './scoring.js';
import type { ModelReport, ModelState, TestOutput, TestStatus } from './testReport.js';
import { INFERENCE_TEST_RESULT, WIRE_SUFFIX } from '../../core/files/home.js';
import type { FailureKind } from './failures.js';
import { vfEvalCommand, vfEvalEnv, vfGroupsFile } from './vfEval.js';
import { saveTestLengths } from '../cost/lengthStore.js';
import { judgeModel, seconds, type ReportBase } from './judgement.js';
import { recordWire } from './wire/recorder.js';
import type { WireExchange } from './wire/exchanges.js';
import type { SamplingMeter } from '../ledger/meter.js';

/** Models run at once per test: the endpoint is remote, the local cost is one Python process each. */
export const MODEL_CONCURRENCY = 3;

export interface TestParameters {
  /** With vf_env_id: a verifiers environment, run with verifiers' eval (vfEval.ts) instead of atroposlib's process. */
  environment: { name: string; file_path: string; vf_env_id?: string };
  num_steps: number;
  group_size: number;
  models: TestModel[];
  base_url: string;
  server_type: ServerType;
  timeout_seconds: number;
  use_wandb: boolean;
  /** `openai:` entries the environment needs (2 when its config_init does not return a list). */
  server_entries: 1 | 2;
}

/** How one model's process starts, and (verifiers) how its saved results become the groups file, or why they cannot. */
interface TestLaunch {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  collect?(): Promise<{ kind: FailureKind; error: string } | undefined>;
}

interface Slot {
  model: TestModel;
  /** Its groups (process output), its log, and what the wire to its endpoint carried. */
  files: { output: string; log: string; wire: string };
  state: ModelState;
  process?: ModelProcess;
  startedAt?: number;
  report?: ModelReport;
}

/** A model id as it appears in its files' names. */
export const modelFileName = (id: string): string => id.replace(/[^A-Za-z0-9._-]+/g, '_');

/** A name for a model's files (`<n>-<id>.log`, `.jsonl`, `.wire.jsonl`): its index keeps two ids that sanitize alike apart. */
function fileStem(index: number, id: string): string {
  return `${index + 1}-${modelFileName(id)}`;
}

/** The key files of a test: the endpoint's (api_key_env) and Tinker's, each only when a model uses it. */
export interface TestKeys {
  endpoint?: KeyConfig;
  tinker?: KeyConfig;
}

export interface TestServices {
  /** Meters what the models sampled on Tinker cost (ledger/meter.ts); absent when none samples there. */
  meter?: SamplingMeter;
  settings: Settings;
  redactor: SecretRedactor;
  logger: Logger;
}

export class InferenceTest {
  /** Sampled on Tinker, so the campaign budget may cancel it (jobs/registry.ts). */
  get paid(): boolean {
    return this.services.meter !== undefined;
  }

  readonly startedAt = Date.now();
  status: TestStatus = 'running';
  /** Resolves when every model process has exited and the result is on disk. */
  readonly done: Promise<void>;
  /** Resolves once the first models (as many as run at once) are running, or over: what a start answers with. */
  readonly started: Promise<void>;
  private readonly slots: Slot[];
  private readonly events = new EventEmitter();
  private cancelReason?: string;
  private finalOutput?: TestOutput;

  constructor(
    readonly id: string,
    readonly dir: string,
    readonly params: TestParameters,
    private readonly services: TestServices,
    keys: TestKeys,
  ) {
    this.slots = params.models.map((model, i) => {
      const stem = fileStem(i, model.id);
      return { model, state: 'queued', files: { output: join(dir, `${stem}.jsonl`), log: join(dir, `${stem}.log`), wire: join(dir, `${stem}${WIRE_SUFFIX}`) } };
    });
    let markStarted!: () => void;
    this.started = new Promise<void>((resolve) => (markStarted = resolve));
    const firstWave = Math.min(MODEL_CONCURRENCY, this.slots.length);
    this.events.on('change', () => {
      if (this.slots.filter((s) => s.state !== 'queued').length >= firstWave) markStarted();
    });
    this.done = this.run(keys).finally(markStarted);
  }

  /** Stops the test: running models are stopped (grace in ms, default the operator's), queued ones never start. */
  cancel(reason: string, graceMs?: number): void {
    if (this.status !== 'running' || this.slots.every((s) => s.report)) return;
    this.cancelReason ??= reason;
    for (const slot of this.slots) slot.process?.stop('cancelled', graceMs);
  }

  /** Subscribes to model state changes; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  /** pids of the model processes still running. */
  pids(): number[] {
    return this.slots.flatMap((s) => (s.state === 'running' && s.process?.pid !== undefined ? [s.process.pid] : []));
  }

  /** Finished models plus a share of the next one that grows with time but never reaches 1: rises with every look. */
  progressValue(): { progress: number; total: number; message: string } {
    const finished = this.slots.filter((s) => s.report).length;
    const elapsed = Date.now() - this.startedAt;
    const spent = elapsed / (elapsed + this.params.timeout_seconds * 1000);
    const running = this.slots.filter((s) => s.state === 'running').map((s) => s.model.id);
    const message = `${finished}/${this.slots.length} models finished${running.length ? `; running: ${running.join(', ')}` : ''}`;
    return { progress: finished + spent, total: this.slots.length, message };
  }

  output(): TestOutput {
    if (this.finalOutput) return this.finalOutput;
    const now = Date.now();
    return {
      ...this.header(),
      message: `Still running (${this.progressValue().message}). Call rl_test_inference({"test_id": "${this.id}"}) to wait for the result.`,
      progress: {
        models_total: this.slots.length,
        models_finished: this.slots.filter((s) => s.report).length,
        elapsed_seconds: seconds(now - this.startedAt),
        models: this.slots.map((s) => ({
          model: s.model.id,
          state: s.state,
          log_file: s.files.log,
          ...(s.state === 'running' && s.startedAt !== undefined ? { elapsed_seconds: seconds(now - s.startedAt), pid: s.process?.pid } : {}),
        })),
      },
    };
  }

  private header(): Pick<TestOutput, 'test_id' | 'status' | 'environment' | 'environment_file' | 'test_config'> {
    const { environment, num_steps, group_size, models, base_url, server_type } = this.params;
    return {
      test_id: this.id,
      status: this.status,
      environment: environment.name,
      environment_file: environment.file_path,
      test_config: {
        num_steps,
        group_size,
        rollouts_per_model: num_steps * group_size,
        total_rollouts: num_steps * group_size * models.length,
        base_url,
        server_type,
      },
    };
  }

  private async run(keys: TestKeys): Promise<void> {
    try {
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < this.slots.length) await this.runModel(this.slots[next++]!, keys);
      };
      await Promise.all(Array.from({ length: Math.min(MODEL_CONCURRENCY, this.slots.length) }, worker));
    } finally {
      for (const keyConfig of [keys.endpoint, keys.tinker]) {
        await keyConfig?.remove().catch((err: unknown) => this.services.logger.error({ err, test_id: this.id }, 'could not remove the inference key file'));
      }
    }
    this.status = this.cancelReason === undefined ? 'completed' : 'cancelled';
    const reports = this.slots.map((s) => s.report!);
    this.finalOutput = {
      ...this.header(),
      ...(this.cancelReason !== undefined ? { message: `Cancelled: ${this.cancelReason}` } : {}),
      models_tested: reports,
      summary: summarize(reports, this.params.num_steps, this.dir),
    };
    await this.persist(this.finalOutput);
    saveTestLengths(this.services.settings.home, { environment: this.params.environment.name, test_id: this.id, reports }, this.services.logger);
    this.services.logger.info({ test_id: this.id, status: this.status, summary: this.finalOutput.summary }, 'inference test finished');
    this.events.emit('change');
  }

  private async runModel(slot: Slot, keys: TestKeys): Promise<void> {
    const base = { model: slot.model.id, name: slot.model.name, scale: slot.model.scale, output_file: slot.files.output, log_file: slot.files.log };
    if (this.cancelReason !== undefined) {
      this.finish(slot, 'cancelled', { ...base, ...scoreGroups([]), error: `Not run: ${this.cancelReason}` });
      return;
    }
    try {
      const keyConfig = slot.model.route?.key.kind === 'tinker' ? keys.tinker : keys.endpoint;
      await this.startAndJudge(slot, slot.model.route?.base_url === this.params.base_url ? base : { ...base, endpoint: slot.model.route?.base_url }, keyConfig!);
    } catch (err) {
      this.services.logger.error({ err, test_id: this.id, model: slot.model.id }, 'inference test model failed');
      this.finish(slot, 'failed', { ...base, ...scoreGroups([]), error: `Internal error: ${err instanceof Error ? err.message : String(err)}` });
    }
  }

  private async startAndJudge(slot: Slot, base: ReportBase, keyConfig: KeyConfig): Promise<void> {
    const { settings, redactor, logger } = this.services;
    const endpointUrl = base.endpoint ?? this.params.base_url;
    const { meter } = this.services;
    const onTinker = meter !== undefined && slot.model.route?.key.kind === 'tinker';
    const onExchange = onTinker ? { onExchange: (e: WireExchange) => e.status === 200 && e.usage && meter.add(e.model ?? slot.model.id, e.usage) } : {};
    const wire = await recordWire(endpointUrl, slot.files.wire, { redactor, logger, processEnv: settings.processEnv, ...onExchange });
    let outcome: ModelProcessOutcome;
    let launch: TestLaunch;
    try {
      launch = this.params.environment.vf_env_id !== undefined ? await this.vfLaunch(slot, wire.baseUrl, endpointUrl, keyConfig) : await this.processLaunch(slot, keyConfig, wire.baseUrl);
      slot.process = await ModelProcess.start({
        ...launch,
        env: wire.env(launch.env),
        logFile: slot.files.log,
        preamble: wire.note,
        timeoutMs: this.params.timeout_seconds * 1000,
        graceMs: settings.stopGraceSeconds * 1000,
        maxFailedGroups: Math.max(5, 2 * this.params.num_steps),
        redactor,
      });
      slot.startedAt = Date.now();
      slot.state = 'running';
      this.events.emit('change');
      outcome = await slot.process.done;
    } finally {
      await wire.stop();
    }
    const ctx = { baseUrl: this.params.base_url, python: settings.python, timeoutSeconds: this.params.timeout_seconds, cancelReason: this.cancelReason, ...(slot.model.route?.key ? { key: slot.model.route.key } : {}) };
    const { report, state } = await judgeModel(ctx, base, outcome, slot.files.wire, launch.collect);
    this.finish(slot, state, report);
  }

  /** verifiers' eval: num_steps examples x group_size rollouts, saved in the model's own folder, then written as groups to its output file. */
  private async vfLaunch(slot: Slot, baseUrl: string, endpointUrl: string, keyConfig: KeyConfig): Promise<TestLaunch> {
    const { settings } = this.services;
    const cwd = `${slot.files.output.replace(/\.jsonl$/, '')}.vf`;
    await mkdir(cwd, { recursive: true });
    const cmd = vfEvalCommand(settings, { vfEnvId: this.params.environment.vf_env_id!, model: slot.model.id, baseUrl, numExamples: this.params.num_steps, rolloutsPerExample: this.params.group_size });
    return { ...cmd, cwd, env: vfEvalEnv(settings, keyConfig.key), collect: () => vfGroupsFile(cwd, slot.files.output, { baseUrl: endpointUrl, model: slot.model.id }) };
  }

  /** The model's `process`, its requests sent to `baseUrl` (the recording proxy's, when there is one). */
  private async processLaunch(slot: Slot, keyConfig: KeyConfig, baseUrl: string): Promise<TestLaunch> {
    const { settings } = this.services;
    const { num_steps, group_size, use_wandb, server_type, environment, server_entries } = this.params;
    const endpoint = endpointEntry({ baseUrl, modelId: slot.model.id, serverType: server_type });
    const keyConfigPath = server_entries === 2 ? await keyConfig.serversFile(basename(slot.files.log, '.log'), [endpoint, endpoint]) : keyConfig.path;
    const { file, args } = processCommand(settings, {
      envFile: environment.file_path,
      numSteps: num_steps,
      groupSize: group_size,
      useWandb: use_wandb,
      outputFile: slot.files.output,
      baseUrl,
      modelId: slot.model.id,
      serverType: server_type,
      keyConfigFile: keyConfigPath,
      serverEntries: server_entries,
    });
    return { file, args, env: processEnv(settings, use_wandb), cwd: settings.root };
  }

  private finish(slot: Slot, state: ModelState, report: ModelReport): void {
    slot.state = state;
    slot.report = report;
    this.events.emit('change');
  }

  private async persist(output: TestOutput): Promise<void> {
    const path = join(this.dir, INFERENCE_TEST_RESULT);
    try {
      await writeFile(`${path}.tmp`, this.services.redactor.redact(JSON.stringify(output)));
      await rename(`${path}.tmp`, path);
    } catch (err) {
      await rm(`${path}.tmp`, { force: true });
      this.services.logger.error({ err, test_id: this.id }, 'could not write the inference test result');
    }
  }
}
