/** rl_edit_config: change one field of the current config, validated against its type (Hermes tool 4). */
import * as z from 'zod';
import { zString, zNumber, zBoolean, zUnknown } from '../core/schemaLeaves.js';
import { previewJson, previewValues, type JsonValue } from '../core/json.js';
import { defineTool } from './define.js';

const MAX_VALUE_CHARS = 64 * 1024;
/** Answers show values longer than this (as JSON) by their start, ending in "...": one answer stays short. */
export const SHOWN_VALUE_CHARS = 300;

const JSON_KINDS = [zString, zNumber, zBoolean, z.null(), z.array(zUnknown), z.record(zString, zUnknown)] as const;

/** Any JSON value, each kind named, so a listed schema says what it holds (a bare `{}` says nothing). */
export const jsonValue = z.union(JSON_KINDS);

/** A value as rl_edit_config takes it; rl_start_training's `config` takes the same. */
export const configValue = z
  .union(JSON_KINDS, {
    // zod's own text for a missing union member is a bare "Invalid input".
    error: (issue) => (issue.input === undefined ? 'value is required: a string, number, boolean, array or object, or null to unset an Optional field' : undefined),
  })
  .refine((v) => JSON.stringify(v).length <= MAX_VALUE_CHARS, `value is too large: at most ${MAX_VALUE_CHARS} characters of JSON`);

export const rlEditConfig = defineTool({
  name: 'rl_edit_config',
  title: 'Edit the RL config',
  description:
    "Sets one field of the selected environment's config (or wandb_project), checked and converted to the field's type; null unsets an optional field. Locked fields are refused. Saved with the selection. Next: rl_check_environment, rl_test_inference, rl_estimate_cost or rl_start_training.",
  input: z
    .object({
      field: zString.min(1).max(128).describe('Field name, e.g. group_size'),
      value: configValue.describe('New value; null unsets an Optional field'),
    })
    .strict(),
  output: z.object({
    message: zString,
    field: zString,
    value: jsonValue,
    config: z.record(zString, zUnknown).describe('Current values of the configurable fields'),
    wandb_project: zString,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler({ field, value }, { runtime, signal }) {
    const { selection } = runtime;
    await selection.verified(signal);
    const stored = selection.edit(field, value as JsonValue);
    const { values, wandbProject } = selection.requireSelection();
    // The answer shows long values by their start (rl_get_current_config's rule): one answer stays short.
    const shown = previewJson(stored, SHOWN_VALUE_CHARS);
    return { message: `Updated ${field} = ${JSON.stringify(shown)}`, field, value: shown, config: previewValues(values, SHOWN_VALUE_CHARS), wandb_project: wandbProject };
  },
});
