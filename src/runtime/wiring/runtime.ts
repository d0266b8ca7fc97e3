/**
 * The application: every service the tools and resources use, wired once per server process.
 * Nothing here imports the MCP SDK: the MCP folders (src/tools, src/resources, src/server) sit on top of this.
 */
import { spendAnswer } from '../ledger/spendAnswer.js';
import { EnvironmentCatalog } from '../environments/catalog.js';
import { createLogger, type Logger } from '../../core/logger.js';
import type { CoreServices } from '../../core/services.js';
import { InferenceTests } from '../inference/testRegistry.js';
import { SecretRedactor } from '../../core/redact.js';
import { RunManager } from '../runs/manager.js';
import { ConfigSelection } from '../config/selection.js';
import { createHome, secretValues, type Settings } from '../../core/settings.js';
import { WandbReader } from '../wandb/reader.js';
import { Evaluations } from '../evaluation/registry.js';
import { Dashboard } from './dashboard.js';
import { TinkerApi } from '../tinker/helper.js';
import { RunUsage } from '../runs/usage.js';
import { RunStore } from '../runs/registry/store.js';
import { Readiness } from '../readiness/readiness.js';

type Closer = () => Promise<void> | void;

export class Runtime {
  readonly redactor: SecretRedactor;
  readonly logger: Logger;
  readonly environments: EnvironmentCatalog;
  readonly selection: ConfigSelection;
  readonly inferenceTests: InferenceTests;
  readonly evaluations: Evaluations;
  readonly wandb: WandbReader;
  readonly runs: RunManager;
  /** Readiness verdicts (rl_check_environment), kept per environment and config. */
  readonly readiness: Readiness;
  /** Tinker's own SDK, asked through python/tinker_api.py: billing, checkpoints, live models. */
  readonly tinker: TinkerApi;
  /** The dashboard view's snapshots (MCP Apps). */
  readonly dashboard: Dashboard;
  private readonly closers: Closer[] = [];
  private closing?: Promise<void>;

  constructor(
    readonly settings: Settings,
    opts: { logger?: Logger } = {},
  ) {
    createHome(settings.home);
    this.redactor = new SecretRedactor(secretValues(settings));
    this.logger = opts.logger ?? createLogger({ level: settings.logLevel, home: settings.home, redactor: this.redactor });
    const core: CoreServices = { settings, logger: this.logger, redactor: this.redactor };
    this.environments = new EnvironmentCatalog(core);
    this.selection = new ConfigSelection(settings, this.logger, this.environments);
    this.inferenceTests = new InferenceTests(core);
    // Inference tests die with the server (unlike training runs, which are adopted later).
    this.onClose(() => this.inferenceTests.close());
    this.evaluations = new Evaluations(core);
    this.onClose(() => this.evaluations.close());
    this.wandb = new WandbReader(core);
    this.tinker = new TinkerApi(core);
    this.runs = new RunManager(core, new RunUsage(core, this.tinker, new RunStore(core.settings.home)));
    // Training runs outlive the server, kept by their keepers, unless RL_STOP_RUNS_ON_EXIT=1 (their
    // keepers are then asked to stop them); either way their state is on disk.
    this.onClose(() => this.runs.close());
    this.readiness = new Readiness(core, { runShape: (selection) => {
        const { estimate } = this.runs.estimate(selection);
        return { ...estimate.shape, ...(estimate.prefills_per_group !== undefined ? { prefills_per_group: estimate.prefills_per_group } : {}) };
      }, lockedValues: (environment) => this.selection.lockedValues(environment) });
    this.dashboard = new Dashboard({ runs: this.runs, wandb: this.wandb, redactor: this.redactor, spend: () => spendAnswer(this.settings) });
  }

  /** Registers work to do at shutdown; closers run in reverse order of registration. */
  onClose(closer: Closer): void {
    this.closers.push(closer);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const closer of [...this.closers].reverse()) {
        try {
          await closer();
        } catch (err) {
          this.logger.error({ err }, 'error during shutdown');
        }
      }
    })();
    return this.closing;
  }
}
