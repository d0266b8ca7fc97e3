/**
 * Sampling an evaluation did on Tinker that the recording proxy did not see (a method that samples
 * by itself: atroposlib's evaluate, verifiers' eval, a recipe's own sampler) counts in the spend
 * ledger from what the model's run recorded, once it ended: its wire file (`<stem>.wire.jsonl`, a
 * line per sampling request with the usage the sampler reported), else the usage totals its result
 * carries (result.json). A model run the proxy metered as it went is not counted again.
 */
import { join } from 'node:path';
import { WIRE_SUFFIX } from '../../core/files/home.js';
import { readExchanges } from '../inference/wire/exchanges.js';
import type { SampledUsage, SamplingMeter } from '../ledger/meter.js';
import type { ModelSpec } from './modelRun.js';

export async function meterUnseen(meter: SamplingMeter, dir: string, spec: Pick<ModelSpec, 'model' | 'stem'>, recorded?: SampledUsage): Promise<void> {
  if (meter.saw(spec.stem)) return;
  const exchanges = (await readExchanges(join(dir, `${spec.stem}${WIRE_SUFFIX}`))).filter((e) => e.status === 200 && e.usage !== undefined);
  for (const e of exchanges) meter.add(e.model ?? spec.model, e.usage!, spec.stem);
  if (exchanges.length === 0 && recorded !== undefined && recorded.prompt_tokens + recorded.completion_tokens > 0) meter.add(spec.model, recorded, spec.stem);
}
