/**
 * The hunks a person accepted in the review of each approval, kept in this
 * page so that a plan's batch review can send them per item.
 */
import { Signal, type ISignal } from '@lumino/signaling';

const selections = new Map<string, readonly number[]>();
const changed = new Signal<object, string>({});

/**
 * The hunk indices accepted in the review of `approvalId` (ascending), or
 * `null` when it was not reviewed in this page.
 *
 * For a queued plan item, pass them on in the plan's `decisions`:
 * `decisionFor(proposal.hunks.length, hunks)` from `common/hunks` gives the
 * `{decision, hunks?}` to send (all accepted: approve; none: deny).
 */
export function reviewSelection(approvalId: string): number[] | null {
  const hunks = selections.get(approvalId);
  return hunks ? [...hunks] : null;
}

/**
 * Emits the approval id whose review selection changed.
 */
export const reviewSelectionChanged: ISignal<object, string> = changed;

/**
 * Record the accepted hunks of an approval's review.
 */
export function setReviewSelection(
  approvalId: string,
  hunks: Iterable<number>
): void {
  const next = [...new Set(hunks)].sort((a, b) => a - b);
  const previous = selections.get(approvalId);
  if (
    previous &&
    previous.length === next.length &&
    previous.every((value, i) => value === next[i])
  ) {
    return;
  }
  selections.set(approvalId, next);
  changed.emit(approvalId);
}

/**
 * Forget an approval's selection (its plan was applied or discarded).
 */
export function clearReviewSelection(approvalId: string): void {
  if (selections.delete(approvalId)) {
    changed.emit(approvalId);
  }
}
