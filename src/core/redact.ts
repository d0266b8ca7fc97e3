/**
 * Replaces secret values in any text that leaves the server: log lines, log tails, tool output.
 * Values shorter than 4 characters are not treated as secrets (the locked dummy key "x" would
 * otherwise blank out every x).
 */
export const REDACTED = '[REDACTED]';

export class SecretRedactor {
  private secrets: string[] = [];

  constructor(initial: Iterable<string> = []) {
    for (const s of initial) this.add(s);
  }

  add(secret: string | undefined): void {
    if (!secret || secret.length < 4 || this.secrets.includes(secret)) return;
    this.secrets.push(secret);
    // Longest first, so a secret that contains another is replaced whole.
    this.secrets.sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) {
      if (out.includes(s)) out = out.split(s).join(REDACTED);
    }
    return out;
  }

  /**
   * redact() for `text` cut out of a longer text between `before` and `after`: a secret that
   * the cut splits is hidden too (whatever part of it `text` holds), which redact(text) alone
   * cannot see. Contexts as long as the longest secret are enough.
   */
  redactWindow(before: string, text: string, after: string): string {
    const whole = before + text + after;
    const start = before.length;
    const end = start + text.length;
    const hidden: [number, number][] = [];
    for (const s of this.secrets) {
      for (let at = whole.indexOf(s); at >= 0; at = whole.indexOf(s, at + 1)) {
        if (at < end && at + s.length > start) hidden.push([Math.max(at, start), Math.min(at + s.length, end)]);
      }
    }
    if (hidden.length === 0) return text;
    hidden.sort((a, b) => a[0] - b[0]);
    let out = '';
    let shown = start;
    for (const [from, to] of hidden) {
      if (to <= shown) continue;
      out += whole.slice(shown, Math.max(from, shown)) + (from >= shown ? REDACTED : '');
      shown = to;
    }
    return out + whole.slice(shown, end);
  }
}

/** Longer than any API key this server is given (Tinker, W&B and OpenRouter keys are under 100). */
const KEY_MAX_CHARS = 200;

/**
 * `text` cut to at most `max` characters (then "..."), for code that has no redactor at hand and
 * whose text is redacted later: a cut inside a key leaves a part redact() cannot recognise. Keys
 * hold no white space, so the cut goes back to the last space within KEY_MAX_CHARS of `max`.
 */
export function cutAtSpace(text: string, max: number): string {
  if (text.length <= max) return text;
  const space = text.slice(Math.max(0, max - KEY_MAX_CHARS), max + 1).search(/\s\S*$/);
  const at = space < 0 ? max : Math.max(0, max - KEY_MAX_CHARS) + space;
  return `${text.slice(0, at)}...`;
}
