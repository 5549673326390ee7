import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import { Signal } from '@lumino/signaling';
import { describe, expect, it, vi } from 'vitest';

import { loadPluginSettings } from './settings';

const PLUGIN = 'test-extension:plugin';

/**
 * The part of Lab's registry the helper uses, over one plugin with a `size`
 * setting (Lab's own SettingRegistry needs a DOM, which these tests run
 * without).
 */
class Settings {
  readonly changed = new Signal<this, void>(this);
  size = 3;

  get(key: string): { composite: unknown } {
    return { composite: key === 'size' ? this.size : undefined };
  }

  set(size: number): void {
    this.size = size;
    this.changed.emit();
  }
}

function registry(settings: Settings): ISettingRegistry {
  const load = async (plugin: string): Promise<Settings> => {
    if (plugin !== PLUGIN) {
      throw new Error(`No plugin ${plugin}`);
    }
    return settings;
  };
  return { load } as unknown as ISettingRegistry;
}

describe('loadPluginSettings', () => {
  it('applies the settings once loaded and again on every change', async () => {
    const settings = new Settings();
    const values: unknown[] = [];
    loadPluginSettings(registry(settings), PLUGIN, loaded => {
      values.push(loaded.get('size').composite);
    });
    await vi.waitFor(() => expect(values).toEqual([3]));
    settings.set(7);
    expect(values).toEqual([3, 7]);
  });

  it('does nothing without a registry', () => {
    const apply = vi.fn();
    loadPluginSettings(null, PLUGIN, apply);
    expect(apply).not.toHaveBeenCalled();
  });

  it('logs a plugin it cannot load and applies nothing', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const apply = vi.fn();
    loadPluginSettings(
      registry(new Settings()),
      'test-extension:missing',
      apply
    );
    await vi.waitFor(() => expect(error).toHaveBeenCalled());
    expect(error.mock.calls[0][0]).toBe(
      'Could not load the settings of test-extension:missing.'
    );
    expect(apply).not.toHaveBeenCalled();
    error.mockRestore();
  });
});
