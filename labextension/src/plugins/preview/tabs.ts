/**
 * The preview tabs: one per dev server (or per external page), opened from
 * an address, restored after a reload.
 */
import type { ILayoutRestorer, JupyterFrontEnd } from '@jupyterlab/application';
import { WidgetTracker } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';

import {
  capabilityState,
  capabilityURL,
  issueCapability,
  proxyURL
} from '../../api/preview';
import { parseTarget, type PreviewTarget } from '../../common/preview/address';
import { PreviewModel, PreviewWidget } from '../../preview';
import { CommandIDs } from './ids';

const NAMESPACE = 'terax-preview';

/**
 * The preview tabs of the page.
 */
export interface IPreviewTabs {
  readonly tracker: WidgetTracker<PreviewWidget>;
  /** Show a target (in its tab when one shows it already). */
  open(
    target: PreviewTarget,
    activate?: boolean,
    id?: string
  ): Promise<PreviewWidget>;
  /** Show an address: a port, a localhost URL or a web address. */
  openAddress(
    address: string | number,
    activate?: boolean,
    id?: string
  ): Promise<PreviewWidget>;
}

export function previewTabs(
  app: JupyterFrontEnd,
  trans: TranslationBundle
): IPreviewTabs {
  const { shell } = app;
  const settings = app.serviceManager.serverSettings;
  const tracker = new WidgetTracker<PreviewWidget>({ namespace: NAMESPACE });

  const urlOf = (model: PreviewModel): string => {
    const target = model.target;
    return target.kind === 'local'
      ? proxyURL(target.port, target.path, settings)
      : target.url;
  };

  const open = async (
    target: PreviewTarget,
    activate = true,
    id?: string
  ): Promise<PreviewWidget> => {
    // One tab per dev server (or per external page).
    const existing = tracker.find(widget => {
      const shown = widget.content.model.target;
      return target.kind === 'local'
        ? shown.kind === 'local' && shown.port === target.port
        : shown.kind === 'external' && shown.url === target.url;
    });
    if (existing) {
      existing.content.model.navigate(target);
      if (activate) {
        shell.activateById(existing.id);
      }
      return existing;
    }
    const model = new PreviewModel({
      target,
      frameURL: async (port, path) => {
        const capability = await issueCapability(port, settings);
        return capabilityURL(capability.prefix ?? '', path, settings);
      },
      frameState: async port => {
        const state = await capabilityState(port, settings);
        const navigation = state.navigation;
        return navigation
          ? { path: navigation.path, error: navigation.error }
          : null;
      }
    });
    const widget = new PreviewWidget({
      model,
      trans,
      openExternally: shown => {
        window.open(urlOf(shown), '_blank', 'noopener');
      },
      basePath: async port =>
        (await issueCapability(port, settings)).prefix ?? ''
    });
    if (id) {
      widget.id = id; // a restored tab keeps its place in the saved layout
    }
    model.changed.connect(() => void tracker.save(widget));
    await tracker.add(widget);
    shell.add(widget, 'main', { type: 'Terax Preview' });
    if (activate) {
      shell.activateById(widget.id);
    }
    return widget;
  };

  const openAddress = (
    address: string | number,
    activate = true,
    id?: string
  ): Promise<PreviewWidget> => {
    const target = parseTarget(String(address));
    if (!target) {
      return Promise.reject(
        new Error(
          trans.__(
            '“%1” is not an address the preview can show: give a port, a localhost URL or an http(s) address.',
            String(address)
          )
        )
      );
    }
    return open(target, activate, id);
  };

  return { tracker, open, openAddress };
}

/**
 * Reopen the preview tabs of the last visit, each at its address.
 */
export function restoreLayout(
  restorer: ILayoutRestorer | null,
  tracker: WidgetTracker<PreviewWidget>
): void {
  restorer
    ?.restore(tracker, {
      command: CommandIDs.openPreview,
      args: widget => ({
        url: widget.content.model.address,
        id: widget.id,
        restore: true
      }),
      name: widget => widget.id
    })
    .catch(reason => {
      console.error('Could not restore the Terax previews.', reason);
    });
}
