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
  /**
   * A call's usage landed (a reply, or a request a hedge abandoned): its cost counts at once. A negative
   * cost takes back part of what was counted early (a reply counted as it landed, then dropped unbilled).
   */
  landed(costUsd: number | null): void;
  /**
   * A landed cost is now saved where every process reads it (a result stored): a shared meter stops
   * counting it as landed here; a local meter already counts it.
   */
  saved(costUsd: number): void;
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

  saved(): void {
    // Counted since it landed.
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

/** What landed in this process and waits for its save, for every part of a job worked here (a run's batches). */
export type LandedPool = { add(usd: number): void; remove(usd: number): void; total(): number };

function ownPool(): LandedPool {
  let usd = 0;
  return { add: (n) => void (usd += n), remove: (n) => void (usd = Math.max(0, usd - n)), total: () => usd };
}

/**
 * The meter of a job whose calls several processes make (a queued run's batches), with a limit. Two
 * readings: a call may start while the spend every process saved (`readSaved`, from the store) plus what
 * landed in this process and is not saved yet (`pool`, shared by the job's parts here) stays under the
 * limit; a result may be saved while the saved spend alone does ({@link underLimit}). Once the saved spend
 * reaches the limit nothing starts or is saved, for good, and `onReached` is told once. Calls stopped on
 * what landed here while the saved spend was under (`stoppedShort`) are stopped for this meter only: the
 * replies may then count for less once saved, so the job's part is worked again with a new meter.
 */
export class SharedBudgetMeter implements BudgetMeter {
  private local = new LocalBudgetMeter(null, 0);
  private unsaved = 0;
  private overLimit = false;
  private short = false;
  private readonly pool: LandedPool;

  constructor(
    readonly limitUsd: number,
    private readonly readSaved: () => Promise<number>,
    private readonly opts: { pool?: LandedPool; onReached?: () => Promise<void> } = {},
  ) {
    this.pool = opts.pool ?? ownPool();
  }

  async mayStart(): Promise<boolean> {
    if (this.reached || !(await this.underLimit())) return false;
    // What is saved, then what landed here (read after it, so a reply saved meanwhile is not missed by both).
    const here = this.pool.total();
    if (here > 0 && (await this.readSaved()) + here >= this.limitUsd) this.short = true;
    return this.short ? false : this.local.mayStart();
  }

  /** Whether the spend every process saved is still under the limit (before a save); once not, for good. */
  async underLimit(): Promise<boolean> {
    if (this.overLimit) return false;
    if ((await this.readSaved()) < this.limitUsd) return true;
    if (this.overLimit) return false;
    this.overLimit = true;
    await this.opts.onReached?.();
    return false;
  }

  landed(costUsd: number | null): void {
    this.local.landed(costUsd);
    if (costUsd === null || costUsd === 0) return;
    if (costUsd < 0) return this.saved(-costUsd);
    this.unsaved += costUsd;
    this.pool.add(costUsd);
  }

  /** A landed cost is now part of what `readSaved` reads (or was dropped): no longer counted as landed here. */
  saved(costUsd: number): void {
    const taken = Math.min(this.unsaved, costUsd);
    if (taken <= 0) return;
    this.unsaved -= taken;
    this.pool.remove(taken);
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

  /** No call starts any more: the saved spend reached the limit, or calls stopped on what landed here. */
  get reached(): boolean {
    return this.overLimit || this.short;
  }

  /** Calls stopped on what landed here while the saved spend was under the limit. */
  get stoppedShort(): boolean {
    return this.short && !this.overLimit;
  }
}
