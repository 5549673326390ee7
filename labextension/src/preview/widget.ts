/**
 * The preview tab: a toolbar (back, forward, reload, the address, open in
 * a new browser tab) over a frame. A local page comes through the server's
 * proxy, from its preview address; both local and external pages run in a
 * sandbox without an origin's rights (a previewed page must never act with
 * Jupyter's credentials), an external one under a notice that sites may
 * refuse to be framed.
 */
import { Clipboard, MainAreaWidget, Notification } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import {
  copyIcon,
  launchIcon,
  refreshIcon,
  Toolbar,
  ToolbarButton
} from '@jupyterlab/ui-components';
import { UUID } from '@lumino/coreutils';
import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { CSS } from './css';
import { backIcon, forwardIcon, previewIcon } from './icons';
import type { INavigation, IPreviewError, PreviewModel } from './model';

/**
 * What a local page may do: run, submit forms, open windows, download.
 * Never `allow-same-origin` (it is served on Jupyter's host: with it, it
 * could read Jupyter's cookies and call its API) and never
 * `allow-top-navigation` (navigating Lab away). The server sends the same
 * sandbox as a policy, for a page opened outside this frame.
 */
const LOCAL_SANDBOX =
  'allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox ' +
  'allow-modals allow-downloads';
/**
 * An external page runs without an origin of its own to use: no cookies,
 * no storage, no access to Lab.
 */
const EXTERNAL_SANDBOX = 'allow-scripts allow-forms allow-popups';

/**
 * The frame and what shows over it.
 */
export class PreviewPanel extends Widget {
  constructor(options: PreviewPanel.IOptions) {
    super();
    this.model = options.model;
    this._trans = options.trans;
    this._openExternally = options.openExternally;
    this.addClass(CSS.panel);

    this._notice = document.createElement('div');
    this._notice.className = CSS.notice;
    this._notice.setAttribute('role', 'note');
    const text = document.createElement('span');
    text.className = CSS.noticeText;
    text.textContent = this._trans.__(
      'An external page, shown in a sandbox. A site that refuses to be shown inside another page stays blank here.'
    );
    const open = document.createElement('button');
    open.type = 'button';
    open.className = CSS.link;
    open.textContent = this._trans.__('Open in a new browser tab');
    open.addEventListener('click', () => this._openExternally());
    const dismiss = document.createElement('button');
    dismiss.type = 'button';
    dismiss.className = CSS.dismiss;
    dismiss.title = this._trans.__('Dismiss');
    dismiss.setAttribute('aria-label', this._trans.__('Dismiss'));
    dismiss.textContent = '×';
    dismiss.addEventListener('click', () => {
      this._noticeDismissed = true;
      this._render();
    });
    this._notice.append(text, open, dismiss);

    this._progress = document.createElement('div');
    this._progress.className = CSS.progress;
    this._body = document.createElement('div');
    this._body.className = CSS.body;
    this._error = document.createElement('div');
    this._error.className = CSS.error;
    this._error.setAttribute('role', 'alert');
    this.node.append(this._notice, this._progress, this._body);
    this._body.append(this._error);

    this.model.changed.connect(this._render, this);
    this.model.navigationRequested.connect(
      (_, navigation) => this._navigate(navigation),
      this
    );
    this._render();
    this.model.start();
  }

  readonly model: PreviewModel;

  /**
   * The frame (for tests and for focus).
   */
  get frame(): HTMLIFrameElement | null {
    return this._frame;
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.dispose();
    super.dispose();
  }

  protected override onActivateRequest(msg: Message): void {
    super.onActivateRequest(msg);
    this._frame?.focus();
  }

  /**
   * Load a page: in the same frame (setting its address loads it again,
   * which is also how it reloads: the page is not ours to script); a change
   * between local and external gets a new frame with the other sandbox.
   */
  private _navigate(navigation: INavigation): void {
    const external = this.model.isExternal;
    let frame = this._frame;
    if (frame && this._frameExternal === external) {
      frame.src = navigation.src;
      return;
    }
    frame?.remove();
    frame = document.createElement('iframe');
    frame.className = CSS.frame;
    frame.title = this._trans.__('Preview of %1', this.model.address);
    frame.setAttribute('sandbox', external ? EXTERNAL_SANDBOX : LOCAL_SANDBOX);
    // The page learns nothing of Lab's address (it names the user, the notebook open).
    frame.referrerPolicy = 'no-referrer';
    frame.addEventListener('load', () => this._loaded());
    frame.src = navigation.src;
    this._body.insertBefore(frame, this._error);
    this._frame = frame;
    this._frameExternal = external;
  }

  private _loaded(): void {
    if (this._frame) {
      void this.model.frameLoaded();
    }
  }

  private _render(): void {
    const model = this.model;
    this.toggleClass(CSS.external, model.isExternal);
    this.toggleClass(CSS.loading, model.loading);
    this._notice.hidden = !model.isExternal || this._noticeDismissed;
    if (this._frame) {
      this._frame.title = this._trans.__('Preview of %1', model.address);
    }
    const error = model.error;
    this._error.hidden = error === null;
    this._error.replaceChildren();
    if (error) {
      this._error.append(this._errorCard(error));
    }
  }

  private _errorCard(error: IPreviewError): HTMLElement {
    const card = document.createElement('div');
    card.className = CSS.errorCard;
    const title = document.createElement('h2');
    title.className = CSS.errorTitle;
    title.textContent =
      error.reason === 'nothing_listening'
        ? this._trans.__('Nothing is running on port %1', this.model.port ?? '')
        : this._trans.__('The preview could not show this page');
    const message = document.createElement('p');
    message.className = CSS.errorMessage;
    message.textContent = error.message;
    const code = document.createElement('code');
    code.className = CSS.errorCode;
    code.textContent = `${error.status} · ${error.reason}`;
    const retry = document.createElement('button');
    retry.type = 'button';
    retry.className = CSS.button;
    retry.textContent = this._trans.__('Reload');
    retry.addEventListener('click', () => this.model.reload());
    card.append(title, message, code, retry);
    return card;
  }

  private readonly _trans: TranslationBundle;
  private readonly _openExternally: () => void;
  private readonly _notice: HTMLElement;
  private readonly _progress: HTMLElement;
  private readonly _body: HTMLElement;
  private readonly _error: HTMLElement;
  private _frame: HTMLIFrameElement | null = null;
  private _frameExternal = false;
  private _noticeDismissed = false;
}

/**
 * A namespace for PreviewPanel statics.
 */
export namespace PreviewPanel {
  export interface IOptions {
    model: PreviewModel;
    trans: TranslationBundle;
    /** Open the page in a new browser tab. */
    openExternally: () => void;
  }
}

/**
 * The address bar: Enter goes, Escape puts the current address back.
 */
class AddressBar extends Widget {
  constructor(
    private readonly _model: PreviewModel,
    trans: TranslationBundle
  ) {
    super();
    this.addClass(CSS.address);
    const input = document.createElement('input');
    input.className = CSS.addressInput;
    input.type = 'text';
    input.spellcheck = false;
    input.autocomplete = 'off';
    input.setAttribute('aria-label', trans.__('Address'));
    input.placeholder = trans.__('A port, a localhost URL or a web address');
    input.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        event.preventDefault();
        const ok = this._model.navigate(input.value);
        input.classList.toggle(CSS.invalid, !ok);
        input.title = ok
          ? ''
          : trans.__(
              'Not an address the preview can show: give a port, a localhost URL or an http(s) address.'
            );
        if (ok) {
          input.blur();
        }
      } else if (event.key === 'Escape') {
        input.value = this._model.address;
        input.classList.remove(CSS.invalid);
        input.blur();
      }
    });
    input.addEventListener('focus', () => input.select());
    this.node.append(input);
    this._input = input;
    this._model.changed.connect(this.update, this);
    this.update();
  }

  protected override onUpdateRequest(msg: Message): void {
    super.onUpdateRequest(msg);
    if (document.activeElement !== this._input) {
      this._input.value = this._model.address;
      this._input.classList.remove(CSS.invalid);
    }
  }

  private readonly _input: HTMLInputElement;
}

/**
 * The preview tab.
 */
export class PreviewWidget extends MainAreaWidget<PreviewPanel> {
  constructor(options: PreviewWidget.IOptions) {
    const { model, trans } = options;
    const content = new PreviewPanel({
      model,
      trans,
      openExternally: () => options.openExternally(model)
    });
    // A plain toolbar: Lab's default one folds items that do not fit into a
    // menu, and the address bar is what should give way, not vanish.
    super({ content, toolbar: new Toolbar() });
    this.id = `terax-preview-${UUID.uuid4()}`;
    this.addClass(CSS.tab);
    this.title.icon = previewIcon;
    this.title.closable = true;

    const back = new ToolbarButton({
      icon: backIcon,
      tooltip: trans.__('Back'),
      onClick: () => model.back()
    });
    const forward = new ToolbarButton({
      icon: forwardIcon,
      tooltip: trans.__('Forward'),
      onClick: () => model.forward()
    });
    const reload = new ToolbarButton({
      icon: refreshIcon,
      tooltip: trans.__('Reload'),
      onClick: () => model.reload()
    });
    const external = new ToolbarButton({
      icon: launchIcon,
      tooltip: trans.__('Open in a new browser tab'),
      onClick: () => options.openExternally(model)
    });
    // A dev server that writes root-absolute URLs (Vite's /@vite/client)
    // must be told where the preview serves it: the capability path.
    const base = new ToolbarButton({
      icon: copyIcon,
      className: 'jp-TeraxPreview-copyBase',
      tooltip: trans.__(
        'Copy the base path to give the dev server (for example vite --base)'
      ),
      onClick: () => {
        const port = model.port;
        if (port === null) {
          return;
        }
        options.basePath(port).then(
          path => {
            Clipboard.copyToSystem(path);
            Notification.info(
              trans.__('Copied %1, the base path for the dev server.', path),
              { autoClose: 8000 }
            );
          },
          (error: unknown) =>
            Notification.error(
              error instanceof Error ? error.message : String(error),
              { autoClose: 6000 }
            )
        );
      }
    });
    this.toolbar.addItem('back', back);
    this.toolbar.addItem('forward', forward);
    this.toolbar.addItem('reload', reload);
    this.toolbar.addItem('address', new AddressBar(model, trans));
    this.toolbar.addItem('copy-base', base);
    this.toolbar.addItem('open-external', external);

    const sync = (): void => {
      back.enabled = model.canGoBack;
      forward.enabled = model.canGoForward;
      base.enabled = !model.isExternal;
      this.title.label = trans.__('Preview: %1', model.label);
      this.title.caption = model.address;
    };
    model.changed.connect(sync);
    sync();
  }
}

/**
 * A namespace for PreviewWidget statics.
 */
export namespace PreviewWidget {
  export interface IOptions {
    model: PreviewModel;
    trans: TranslationBundle;
    /** Open the model's page in a new browser tab. */
    openExternally: (model: PreviewModel) => void;
    /** The path prefix a local page of this port is served under. */
    basePath: (port: number) => Promise<string>;
  }
}
