/**
 * Which host a process runs on. RL_HOME may be shared by several hosts (a cluster's login nodes
 * over NFS), and a pid means nothing off its own host, so every process we record or lock names
 * its host: the hostname, which tells hosts apart (namespaces and containers of one kernel share a
 * boot id), and the boot id, which changes at every boot, so a process recorded under an earlier
 * boot of this host is certainly gone. Systems without /proc have no boot id: the hostname alone.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

export interface HostId {
  hostname: string;
  boot_id: string;
}

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

export const THIS_HOST: HostId = { hostname: hostname(), boot_id: bootId() };

/** How a host stands to this one: `here`, this host at an earlier boot (`rebooted`), or `elsewhere`. Records written before hosts were named (none) are this host's. */
export function hostRelation(host: HostId | undefined, here: HostId = THIS_HOST): 'here' | 'rebooted' | 'elsewhere' {
  if (host === undefined) return 'here';
  if (host.hostname !== here.hostname) return 'elsewhere';
  return host.boot_id === here.boot_id ? 'here' : 'rebooted';
}

export const isThisHost = (host: HostId | undefined): boolean => hostRelation(host) === 'here';

/** A host as answers name it. */
export const hostName = (host: HostId | undefined): string => host?.hostname ?? THIS_HOST.hostname;

/** Whether a value read from a file is a HostId. */
export function isHostId(value: unknown): value is HostId {
  const v = value as Partial<HostId> | null;
  return typeof v === 'object' && v !== null && typeof v.hostname === 'string' && typeof v.boot_id === 'string';
}
