/** The frameworks a run can belong to, each one's implementation of the seam (seams/framework.ts). */
import { implementationOf } from '../../../core/implementations.js';
import type { RunFramework, RunSelection } from '../seams/framework.js';
import { ATROPOS } from '../atropos/framework.js';
import { COOKBOOK } from '../cookbook/framework.js';
import type { FrameworkName, RunRecord } from '../seams/record.js';

const FRAMEWORK_IMPLEMENTATIONS: Partial<Record<FrameworkName, RunFramework>> = { atropos: ATROPOS, cookbook: COOKBOOK };

export const framework = (name: FrameworkName): RunFramework => implementationOf(FRAMEWORK_IMPLEMENTATIONS, name, 'framework');

export const frameworkOf = (record: Pick<RunRecord, 'framework'>): RunFramework => framework(record.framework);

/** The framework that trains `selection`: its environment's, Atropos for an environment that names none. */
export const frameworkFor = (selection: RunSelection): RunFramework => framework(selection.environment.framework ?? 'atropos');
