/**
 * Hosts for tests of several hosts sharing one RL_HOME: each a PID and UTS namespace (its own
 * process table and hostname) with its own /proc, sharing this machine's files and network, as
 * login nodes share an NFS RL_HOME. A host lives while its init (a `sleep`, pid 1 inside) lives;
 * ending it kills every process in it at once, as a host that goes away does. Needs root.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { connectStdio, type StdioHarness, type StdioOptions } from './client.js';
import { argvOf, isAlive, procInfo, waitUntil } from './runs.js';

export interface Host {
  name: string;
  /** The host's init, as this machine's process table sees it. */
  initPid: number;
  /** Runs `command` inside the host. */
  spawn(command: string, args: string[], env: Record<string, string>): ChildProcess;
  /** An MCP server started inside the host, and its client. */
  connect(env: Record<string, string>, options?: StdioOptions): Promise<StdioHarness>;
  /** Whether a pid of this machine's table is a process of this host. */
  holds(pid: number): boolean;
  /** The host goes away: every process in it is killed. */
  end(): Promise<void>;
}

/** Why these tests cannot run here, or undefined. */
export function hostsMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'several hosts are simulated with PID and UTS namespaces, which needs root';
  const probe = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', '--uts', 'true']);
  return probe.status === 0 ? undefined : `unshare cannot make a PID and UTS namespace here: ${String(probe.stderr).trim()}`;
}

const pidNamespace = (pid: number): string | undefined => {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
};

export async function startHost(t: TestContext, name: string): Promise<Host> {
  const unshare = spawn('unshare', ['--pid', '--fork', '--mount-proc', '--uts', 'sh', '-c', `hostname ${name} && exec sleep infinity`], { stdio: 'ignore' });
  const initPid = await waitUntil(`host ${name} is up`, () => {
    const children = spawnSync('pgrep', ['-P', String(unshare.pid)], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).map(Number);
    const init = children[0];
    return init !== undefined && readFileSync(`/proc/${init}/cmdline`, 'utf8').startsWith('sleep') ? init : undefined;
  }, 10);
  const ns = pidNamespace(initPid);
  const enter = ['nsenter', '-t', String(initPid), '--pid', '--uts', '--mount'];
  const host: Host = {
    name,
    initPid,
    spawn: (command, args, env) => spawn(enter[0]!, [...enter.slice(1), command, ...args], { env, stdio: 'ignore' }),
    connect: (env, options = {}) => connectStdio(env, { ...options, prefix: enter }),
    holds: (pid) => ns !== undefined && pidNamespace(pid) === ns,
    end: async () => {
      process.kill(initPid, 'SIGKILL');
      await waitUntil(`host ${name} is gone`, () => unshare.exitCode !== null || unshare.signalCode !== null, 10);
    },
  };
  t.after(() => (unshare.exitCode === null ? host.end() : undefined));
  return host;
}

/**
 * Live keepers of run `runId` in every host of this machine (a keeper names its run in its command
 * line). A process a keeper is starting is a copy of it until it runs its own program, so a
 * keeper's child is not one.
 */
export function keepersOf(runId: string): number[] {
  const keepers = readdirSync('/proc').flatMap((name) => {
    if (!/^\d+$/.test(name)) return [];
    const pid = Number(name);
    return argvOf(pid).includes(`keeping ${runId}`) && isAlive(pid) ? [pid] : [];
  });
  return keepers.filter((pid) => !keepers.includes(procInfo(pid)?.ppid ?? -1));
}

/** The run's keeper history (keepers.jsonl): each taking, hand-over and release of its lock. */
export function keeperHistory(home: string, runId: string): { at: string; event: string; host: string; pid: number; token: string; detail?: Record<string, unknown> }[] {
  try {
    return readFileSync(join(home, 'runs', runId, 'keepers.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}
