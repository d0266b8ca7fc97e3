/** A one-line text chart of a metric series, for agents and chat clients that render no images. */
import { evenlySpaced } from './history.js';
import type { MetricNumber } from './tolerantJson.js';

const BARS = '▁▂▃▄▅▆▇█';
/** Non-finite points stay visible: a loss that went NaN is exactly what the chart must show. */
const NON_FINITE = '·';
export const SPARKLINE_WIDTH = 40;

export function sparkline(values: readonly MetricNumber[], width = SPARKLINE_WIDTH): string {
  const points = evenlySpaced(values, width).map((v) => (typeof v === 'number' ? v : Number.NaN));
  const finite = points.filter(Number.isFinite);
  const min = Math.min(...finite);
  const span = Math.max(...finite) - min;
  return points
    .map((v) => {
      if (!Number.isFinite(v)) return NON_FINITE;
      // A flat series sits mid-height: a bottom line would read as "dropped to its minimum".
      return BARS[span === 0 ? 3 : Math.round(((v - min) / span) * (BARS.length - 1))];
    })
    .join('');
}
