/**
 * The budget meter of a job (lib/jobs): every kind asks it before a call goes out (may this start?),
 * tells it what each call cost as it lands, and settles the call when it ends. Written once for every
 * kind, so "stop starting calls at max_cost_usd, let those in flight finish and count them" means the
 * same wherever it is read. Costs come priced (USD, or null when a model has no price: then the spend is
 * unknown and never reaches a limit, as before).
 */

/** What a job's work asks of its budget. */
export interface BudgetMeter {
  /** May a call start now? True counts it in flight until {@link settle}; false once the limit is reached (for good). */
  mayStart(): boolean | Promise<boolean>;
  /** A call's usage landed (a reply, or a request a hedge abandoned): its cost counts at once. */
  landed(costUsd: number | null): void;
  /** A started call ended (answered, failed or aborted): it is no longer in flight. */
  settle(): void;
  /** The spend so far (USD), null once a call could not be priced. */
  readonly spentUsd: number | null;
  /** Calls started and not settled. */
  readonly inFlight: number;
  /** Whether the limit was reached: no call starts after it. */
  readonly reached: boolean;
}

/**
 * The meter of a job worked by one process: the spend it counted itself on top of `startUsd` (what earlier
 * attempts of the job saved). No limit: every call may start, and the spend is still counted.
 */
export class LocalBudgetMeter implements BudgetMeter {
  private spent: number | null;
  private open = 0;
  private stopped = false;

  constructor(
    readonly limitUsd: number | null = null,
    startUsd: number | null = 0,
  ) {
    this.spent = startUsd;
    this.check();
  }

  mayStart(): boolean {
    if (this.check()) return false;
    this.open++;
    return true;
  }

  landed(costUsd: number | null): void {
    this.spent = costUsd === null || this.spent === null ? null : this.spent + costUsd;
    this.check();
  }

  settle(): void {
    if (this.open > 0) this.open--;
  }

  get spentUsd(): number | null {
    return this.spent;
  }

  get inFlight(): number {
    return this.open;
  }

  get reached(): boolean {
    return this.check();
  }

  private check(): boolean {
    if (!this.stopped && this.limitUsd !== null && this.spent !== null && this.spent >= this.limitUsd) this.stopped = true;
    return this.stopped;
  }
}

/**
 * The meter of a job whose calls several processes make (a queued run's batches): a call may start while the
 * spend every process saved (`readSaved`, from the store) plus what landed here and is not saved yet stays
 * under the limit. `saved(costUsd)` moves a landed cost into the saved spend once its result is stored.
 */
export class SharedBudgetMeter implements BudgetMeter {
  private local: LocalBudgetMeter;
  private unsaved = 0;
  private stopped = false;

  constructor(
    readonly limitUsd: number,
    private readonly readSaved: () => Promise<number>,
  ) {
    this.local = new LocalBudgetMeter(null, 0);
  }

  async mayStart(): Promise<boolean> {
    if (this.stopped) return false;
    if ((await this.readSaved()) + this.unsaved >= this.limitUsd) this.stopped = true;
    return this.stopped ? false : this.local.mayStart();
  }

  landed(costUsd: number | null): void {
    this.local.landed(costUsd);
    if (costUsd !== null) this.unsaved += costUsd;
  }

  /** A landed cost is now part of what `readSaved` reads. */
  saved(costUsd: number): void {
    this.unsaved = Math.max(0, this.unsaved - costUsd);
  }

  settle(): void {
    this.local.settle();
  }

  get spentUsd(): number | null {
    return this.local.spentUsd;
  }

  get inFlight(): number {
    return this.local.inFlight;
  }

  get reached(): boolean {
    return this.stopped;
  }
}
