/**
 * The placements a run can have, each one's implementation of the seam (seams/placement.ts):
 * made from a server's settings to act on processes, or read without them (`processIdentity`).
 */
import { implementationOf } from '../../../core/implementations.js';
import type { Settings } from '../../../core/settings.js';
import type { Placement, ProcessIdentity } from '../seams/placement.js';
import { LOCAL } from '../placement/local.js';
import { SLURM_PROCESSES, slurmPlacement } from '../placement/slurm/slurm.js';
import type { PlacementName, RunRecord } from '../seams/record.js';

const PLACEMENT_IMPLEMENTATIONS: Partial<Record<PlacementName, (settings: Settings) => Placement>> = { local: () => LOCAL, slurm: slurmPlacement };
const PROCESS_IDENTITIES: Partial<Record<PlacementName, ProcessIdentity>> = { local: LOCAL, slurm: SLURM_PROCESSES };

export const placement = (name: PlacementName, settings: Settings): Placement => implementationOf(PLACEMENT_IMPLEMENTATIONS, name, 'placement')(settings);

export const placementOf = (record: Pick<RunRecord, 'placement'>, settings: Settings): Placement => placement(record.placement, settings);

/** What a record's processes are to their placement, for readers that act on none of them. */
export const processIdentity = (name: PlacementName): ProcessIdentity => implementationOf(PROCESS_IDENTITIES, name, 'placement');
