/**
 * The time one lookup (a status check, a results fetch) may spend on W&B, across every request
 * and retry it makes, combined with the caller's AbortSignal: host clients cancel tool calls, and
 * a tool must answer with the rest of its status well before they do.
 */
export class CallBudget {
  /** Aborts when the caller cancels or the budget is spent. */
  readonly signal: AbortSignal;
  private readonly expiresAt: number;

  constructor(
    readonly budgetMs: number,
    private readonly caller?: AbortSignal,
  ) {
    this.expiresAt = Date.now() + budgetMs;
    const budget = AbortSignal.timeout(budgetMs);
    this.signal = caller ? AbortSignal.any([caller, budget]) : budget;
  }

  remainingMs(): number {
    return Math.max(0, this.expiresAt - Date.now());
  }

  get cancelled(): boolean {
    return this.caller?.aborted === true;
  }

  get spent(): boolean {
    return !this.cancelled && (this.signal.aborted || this.remainingMs() === 0);
  }
}
