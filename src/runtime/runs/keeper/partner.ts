/**
 * A keeper's partner, so that no keeper is the last line: a POSIX shell blocked reading a pipe
 * whose other end only its keeper holds. A keeper that ends by itself (its run ended, it was told to
 * go, it lost the lock, it crashed) first writes a line, and the partner exits. A keeper that is
 * killed (SIGKILL, the OOM killer) cannot: the kernel closes its end, the read ends with nothing,
 * and the partner becomes the run's next keeper by exec (the same pid, so never two processes),
 * started as one started by hand is, from the server's directory and environment; it takes the dead
 * keeper's lock over and the live processes with it (their exit codes are then unknown). The shell
 * costs about a megabyte, against a Node keeper's fifty. A keeper that crashed on a bug of ours is
 * not restarted in a loop: the next server's look tries again (docs/architecture.md).
 */
import type { ChildProcess } from 'node:child_process';
import { KEEPER_ENTRY } from '../../../core/files/paths.js';
import { childProcess } from '../../../core/onDemand.js';

/** $1 the directory keepers start from, $2 node, $3 the keeper, $4 the run directory. */
const SCRIPT = 'if read -r _; then exit 0; fi; cd "$1" || exit 1; exec "$2" "$3" "$4"';
/** A partner that died while its keeper lives (killed by hand) is replaced after this long. */
const RESPAWN_MS = 1_000;

export class KeeperPartner {
  private child?: ChildProcess;
  private dismissed = false;
  private respawn?: NodeJS.Timeout;

  /**
   * `cwd`: where the keeper's settings were read (their relative paths are that directory's). The
   * shell is forked once the run's start-up has had its turn: a fork of the keeper is no step of
   * the run's way to its first process.
   */
  constructor(
    private readonly runDir: string,
    private readonly cwd: string,
  ) {
    setImmediate(() => this.dismissed || this.start());
  }

  /** The partner's pid (tests, the bench). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The keeper ends by itself: the partner exits; resolves once it has (at most a second). */
  async dismiss(): Promise<void> {
    this.dismissed = true;
    clearTimeout(this.respawn);
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((done) => {
      child.once('exit', () => done());
      setTimeout(done, 1_000).unref();
    });
    child.stdin?.end('\n');
    await gone;
  }

  private start(): void {
    const child = childProcess().spawn('/bin/sh', ['-c', SCRIPT, 'rl-training-mcp-keeper-partner', this.cwd, process.execPath, KEEPER_ENTRY, this.runDir], {
      cwd: this.runDir,
      env: process.env,
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.on('error', () => undefined);
    child.stdin?.on('error', () => undefined);
    child.on('exit', () => {
      if (this.dismissed) return;
      this.respawn = setTimeout(() => this.dismissed || this.start(), RESPAWN_MS);
      this.respawn.unref();
    });
    // Neither the pipe nor the child holds the keeper open: the run does.
    child.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    this.child = child;
  }
}
