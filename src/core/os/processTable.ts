/**
 * What the operating system says about processes: a pid alone is not an identity (pids are
 * reused), so a process is named by pid plus start time, and "alive" excludes zombies (an
 * orphan whose init does not reap it still answers kill(pid, 0)). Linux reads /proc; other
 * systems fall back to `ps`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { childProcess } from '../onDemand.js';
import { THIS_HOST } from './host.js';

const HAS_PROC = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

/** Ties start-time ticks to this boot: after a reboot no recorded process can match. */
const BOOT_ID = THIS_HOST.boot_id;

interface ProcStat {
  pid: number;
  state: string;
  pgrp: number;
  /** Stable for the life of the process. */
  startTime: string;
}

function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), [2] field 5 (pgrp), [19] field 22 (start time in clock ticks).
  return { pid, state: fields[0]!, pgrp: Number(fields[2]), startTime: `${BOOT_ID}:${fields[19]}` };
}

function psStats(args: string[]): ProcStat[] {
  let out: string;
  try {
    out = childProcess().execFileSync('ps', [...args, '-o', 'pid=,pgid=,stat=,lstart='], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return [];
  }
  return out
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.+?)\s*$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), pgrp: Number(m[2]), state: m[3]!.charAt(0), startTime: `ps:${m[4]}` }));
}

function stat(pid: number): ProcStat | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return HAS_PROC ? procStat(pid) : psStats(['-p', String(pid)])[0];
}

/** The start time of a live (non-zombie) process, or undefined when there is none. */
export function processStartTime(pid: number): string | undefined {
  const s = stat(pid);
  return s && s.state !== 'Z' ? s.startTime : undefined;
}

/** True when `pid` is alive and is the process that had `startTime` (not a reused pid). */
export function isSameProcess(pid: number, startTime: string | null | undefined): boolean {
  const now = processStartTime(pid);
  return now !== undefined && (startTime === null || startTime === undefined || now === startTime);
}

/** Live (non-zombie) processes of process group `pgid`. */
export function groupMembers(pgid: number): number[] {
  const all = HAS_PROC
    ? readdirSync('/proc')
        .filter((name) => /^\d+$/.test(name))
        .map((name) => procStat(Number(name)))
    : psStats(['-A']);
  return all.filter((s): s is ProcStat => s !== undefined && s.pgrp === pgid && s.state !== 'Z').map((s) => s.pid);
}

/**
 * The live members of the group led by the recorded process. Empty when the leader's pid now
 * names another process: Linux never reuses a pid while a group of that id has members, so a
 * different process at that pid means our group is gone and the id belongs to someone else.
 */
export function liveGroup(leader: { pid: number; startTime: string | null }): number[] {
  const current = processStartTime(leader.pid);
  if (current !== undefined && leader.startTime !== null && current !== leader.startTime) return [];
  return groupMembers(leader.pid);
}

/** Sends `signal` to a whole process group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}
