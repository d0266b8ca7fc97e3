/**
 * The life of a run's supervisor (docs/architecture.md, "The life of a run"): one state, changed
 * only along the table below. Events arrive late and in any order (an exit seen after a stop
 * began, a verdict reached after the keeper let go); each verb checks what the table allows
 * before acting, and a change the table forbids is a bug, so it throws.
 *
 *   created     nothing begun yet
 *   starting    start-up stages under way (API -> trainer -> environment)
 *   watching    the run trains; exits and the outcome rules are watched
 *   concluding  an outcome is decided (or was, before an earlier keeper died): what is left is stopped
 *   stopping    a stop was asked for (user, another server, or server exit): everything is stopped
 *   ended       the run is over, its processes are gone, the supervisor let go
 *   detached    the supervisor let go of a run that goes on (its keeper told to go, lock lost): a new keeper takes it
 */
export const LIFE_STATES = ['created', 'starting', 'watching', 'concluding', 'stopping', 'ended', 'detached'] as const;
export type LifeState = (typeof LIFE_STATES)[number];

/** The states each state may change to. */
export const TRANSITIONS: Readonly<Record<LifeState, readonly LifeState[]>> = {
  // A run taken over from a keeper that died carries on from where its record says it was.
  created: ['starting', 'watching', 'concluding', 'stopping', 'detached'],
  starting: ['watching', 'concluding', 'stopping', 'detached'],
  watching: ['concluding', 'stopping', 'detached'],
  concluding: ['ended', 'detached'],
  stopping: ['ended', 'detached'],
  ended: [],
  detached: [],
};

export function canTransition(from: LifeState, to: LifeState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The states in which the run goes on: no outcome decided, no stop begun, not let go. */
const ONGOING: readonly LifeState[] = ['created', 'starting', 'watching'];

export class Lifecycle {
  private current: LifeState = 'created';
  private settle!: () => void;
  /** Resolves once the supervisor has let go of the run (`ended` or `detached`). */
  readonly done = new Promise<void>((resolve) => (this.settle = resolve));

  constructor(private readonly onChange: (from: LifeState, to: LifeState) => void) {}

  get state(): LifeState {
    return this.current;
  }

  get ongoing(): boolean {
    return ONGOING.includes(this.current);
  }

  /** Let go: no state follows. */
  get over(): boolean {
    return TRANSITIONS[this.current].length === 0;
  }

  can(to: LifeState): boolean {
    return canTransition(this.current, to);
  }

  change(to: LifeState): void {
    const from = this.current;
    if (!canTransition(from, to)) throw new Error(`illegal supervisor state change: ${from} -> ${to}`);
    this.current = to;
    if (this.over) this.settle();
    this.onChange(from, to);
  }
}
