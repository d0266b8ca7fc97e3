/**
 * Dollar amounts in messages, the one place they are written: a figure is shown exactly when it
 * has at most four decimals, else with four significant digits under $1 and cents at least above,
 * so a spend can be compared with its limit; amounts shown together get more digits until
 * different amounts read differently. Answers keep the exact numbers in their fields.
 */

/** The figure exactly when it has at most four decimals; else `digits` significant digits under $1, cents (and `digits` - 4 more decimals) from $1. */
function shown(x: number, digits: number): string {
  const tenThousandths = x * 10_000;
  if (Math.abs(tenThousandths - Math.round(tenThousandths)) < 1e-6) return `${Math.round(tenThousandths) / 10_000}`;
  return Math.abs(x) < 1 ? `${Number(x.toPrecision(digits))}` : x.toFixed(2 + digits - 4);
}

/** One amount: `$0.06923`, `$1`, `$12.50`. */
export function money(x: number): string {
  return `$${shown(x, 4)}`;
}

/** Several amounts of one message, in order: with as many digits as it takes for different amounts to read differently. */
export function moneys(...xs: number[]): string[] {
  for (let digits = 4; digits < 15; digits++) {
    const texts = xs.map((x) => shown(x, digits));
    const clash = xs.some((x, i) => xs.some((y, j) => x !== y && texts[i] === texts[j]));
    if (!clash) return texts.map((t) => `$${t}`);
  }
  return xs.map((x) => `$${x}`);
}
