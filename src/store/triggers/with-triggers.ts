import type {
  NewTrigger,
  TriggerDelivery,
  TriggerDetail,
  TriggerStore,
  TriggerSummary,
} from '../contract/triggers.js';

// biome-ignore lint/suspicious/noExplicitAny: a mixin's base takes whatever its constructor takes.
type StoreBase = abstract new (...args: any[]) => object;

/**
 * The trigger commands of the Store contract, once for both dialects: each is the dialect's own
 * trigger rows (`triggerRows`: sqlite-triggers.ts, postgres-triggers.ts), which hold no decision
 * the other lacks; the store adds nothing around them.
 */
export function withTriggers<B extends StoreBase>(Base: B) {
  abstract class WithTriggers extends Base implements TriggerStore {
    /** The dialect's trigger rows. */
    abstract readonly triggerRows: TriggerStore;

    addTrigger(spec: NewTrigger): Promise<TriggerSummary> {
      return this.triggerRows.addTrigger(spec);
    }

    getTrigger(name: string): Promise<TriggerDetail | null> {
      return this.triggerRows.getTrigger(name);
    }

    listTriggers(): Promise<TriggerSummary[]> {
      return this.triggerRows.listTriggers();
    }

    setTriggerPaused(name: string, paused: boolean, now: number): Promise<TriggerSummary> {
      return this.triggerRows.setTriggerPaused(name, paused, now);
    }

    removeTrigger(name: string): Promise<boolean> {
      return this.triggerRows.removeTrigger(name);
    }

    recordTriggerDelivery(delivery: TriggerDelivery): Promise<void> {
      return this.triggerRows.recordTriggerDelivery(delivery);
    }

    listTriggerDeliveries(name: string, limit?: number): Promise<TriggerDelivery[]> {
      return this.triggerRows.listTriggerDeliveries(name, limit);
    }
  }
  return WithTriggers;
}
