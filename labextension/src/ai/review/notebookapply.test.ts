import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { type IRoomDocumentLike, saveThroughRoom } from './notebookapply';

type Slot = (
  sender: unknown,
  change: { stateChange?: { name: string }[] }
) => void;

function room(): IRoomDocumentLike & {
  emit(name: string): void;
  slots: Set<Slot>;
} {
  const slots = new Set<Slot>();
  return {
    slots,
    changed: {
      connect: (slot: Slot) => slots.add(slot),
      disconnect: (slot: Slot) => slots.delete(slot)
    },
    emit: (name: string) =>
      [...slots].forEach(slot => slot(null, { stateChange: [{ name }] }))
  };
}

describe('saveThroughRoom', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("waits for the room's save and does not save itself", async () => {
    const shared = room();
    const save = vi.fn(() => Promise.resolve());
    const saved = saveThroughRoom(shared, save, 1000);
    shared.emit('dirty');
    expect(shared.slots.size).toBe(1);
    shared.emit('hash');
    await saved;
    await vi.advanceTimersByTimeAsync(2000);
    expect(save).not.toHaveBeenCalled();
    expect(shared.slots.size).toBe(0);
  });

  it('saves explicitly when the room does not (autosave off)', async () => {
    const shared = room();
    const save = vi.fn(() => Promise.resolve());
    const saved = saveThroughRoom(shared, save, 1000);
    await vi.advanceTimersByTimeAsync(1000);
    await saved;
    expect(save).toHaveBeenCalledTimes(1);
    expect(shared.slots.size).toBe(0);
  });

  it('fails when the explicit save fails', async () => {
    const shared = room();
    const saved = saveThroughRoom(
      shared,
      () => Promise.reject(new Error('no')),
      10
    );
    const failed = expect(saved).rejects.toThrow('no');
    await vi.advanceTimersByTimeAsync(10);
    await failed;
  });
});
