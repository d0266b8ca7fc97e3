/** rl_get_current_config: the selected environment's fields and current values (Hermes tool 3). */
import * as z from 'zod';
import { zString, zBoolean } from '../core/schemaLeaves.js';
import { costEstimate } from '../runtime/wiring/costs.js';
import { lastKnownModels, servedText } from '../runtime/tinker/models.js';
import { estimateSchema } from './costSchemas.js';
import { readinessSchema } from './readinessSchema.js';
import { previewJson, type JsonValue } from '../core/json.js';
import { defineTool } from './define.js';
import { jsonValue, SHOWN_VALUE_CHARS } from './rl_edit_config.js';

const field = z.object({
  name: zString,
  type: zString,
  default: jsonValue,
  description: zString,
  current_value: jsonValue,
  allowed: zString.optional().describe('Allowed values or range beyond the type'),
});

export const rlGetCurrentConfig = defineTool({
  name: 'rl_get_current_config',
  title: 'Show the current RL config',
  description:
    "Shows the selected environment's config: the fields rl_edit_config can change (type, default, current value), the fields the operator locked, and wandb_project; flags a base model Tinker no longer serves. Read-only. Next: rl_edit_config, rl_test_inference or rl_estimate_cost.",
  input: z.object({}).strict(),
  output: z.object({
    environment: zString,
    selected_at: zString.describe('When rl_select_environment chose it (ISO 8601)'),
    introspection: z.enum(['import', 'static']),
    configurable_fields: z.array(field),
    locked_fields: z.array(field.extend({ locked_value: jsonValue })),
    wandb_project: zString,
    cost_estimate: estimateSchema.describe('What a run of this config would cost (as rl_estimate_cost answers)'),
    readiness: readinessSchema,
    base_model: z
      .object({ name: zString, live: zBoolean.nullable().describe('false: Tinker no longer serves it (a start is refused); null: not checked, note says why'), note: zString })
      .describe('The base model a run trains, checked against the models Tinker served when rl_doctor or rl_start_training last asked (nothing is asked here)'),
    tip: zString,
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(_args, { runtime, signal }) {
    const { selection } = runtime;
    const selected = await selection.verified(signal);
    const { environment, selectedAt, introspection, wandbProject } = selected;
    const { editable, locked } = selection.describe();
    // A long value (a dataset list) is shown by its start: every field stays in one short answer.
    const short = <T extends { default: JsonValue; current_value: JsonValue }>(f: T): T => ({ ...f, default: previewJson(f.default, SHOWN_VALUE_CHARS), current_value: previewJson(f.current_value, SHOWN_VALUE_CHARS) });
    const cost = costEstimate(runtime, selected);
    const served = servedText(cost.model, lastKnownModels(runtime));
    return {
      environment: environment.name,
      selected_at: selectedAt,
      introspection,
      configurable_fields: editable.map(short),
      locked_fields: locked.map((f) => ({ ...short(f), locked_value: previewJson(f.locked_value, SHOWN_VALUE_CHARS) })),
      wandb_project: wandbProject,
      cost_estimate: cost,
      readiness: runtime.readiness.view(selected),
      base_model: { name: cost.model, ...served },
      tip: 'Use rl_edit_config(field, value) to change any configurable field; wandb_project sets the W&B project of the run.',
    };
  },
});
