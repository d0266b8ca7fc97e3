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
}
