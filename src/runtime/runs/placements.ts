/** The placements a run can have, each one's implementation of the seam (placement/placement.ts). */
import { implementationOf } from '../../core/implementations.js';
import type { Placement } from './placement/placement.js';
import { LOCAL } from './placement/local.js';
import type { PlacementName, RunRecord } from './registry/record.js';

const PLACEMENT_IMPLEMENTATIONS: Partial<Record<PlacementName, Placement>> = { local: LOCAL };

export const placement = (name: PlacementName): Placement => implementationOf(PLACEMENT_IMPLEMENTATIONS, name, 'placement');

export const placementOf = (record: Pick<RunRecord, 'placement'>): Placement => placement(record.placement);
