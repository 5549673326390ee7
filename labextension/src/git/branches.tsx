/**
 * The branch switcher: a filterable list of local and remote branches, and
 * "create branch" for a name that does not exist yet.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { checkIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import type { IGitBranches } from '../api/git';
import { moveActive } from '../common/listnav';
import { CSS } from './css';
import { branchIcon, stageIcon } from './icons';

/**
 * One choice of the switcher.
 */
interface IChoice {
  kind: 'local' | 'remote' | 'create';
  name: string;
  detail: string;
  current: boolean;
}

/**
 * Props of {@link BranchSwitcher}.
 */
export interface IBranchSwitcherProps {
  branches: IGitBranches | null;
  trans: TranslationBundle;
  onCheckout: (name: string) => void;
  onCreate: (name: string) => void;
  onClose: () => void;
}

/**
 * Whether a name can be a branch name (the server checks it exactly; this
 * only keeps the obvious mistakes from being offered).
 */
function plausibleBranchName(name: string): boolean {
  return (
    name.length > 0 &&
    !/[\s~^:?*[\\]|\.\.|@\{|^[-/.]|[/.]$|\.lock$/.test(name) &&
    name !== '@'
  );
}

/**
 * The switcher, shown under the branch button.
 */
export function BranchSwitcher(props: IBranchSwitcherProps): JSX.Element {
  const { branches, trans } = props;
  const [filter, setFilter] = React.useState('');
  const [active, setActive] = React.useState(0);
  const inputRef = React.useRef<HTMLInputElement>(null);
  const listRef = React.useRef<HTMLDivElement>(null);

  React.useEffect(() => {
    inputRef.current?.focus();
  }, []);

  const choices = ((): IChoice[] => {
    if (!branches) {
      return [];
    }
    const needle = filter.trim().toLowerCase();
    const matches = (name: string) => name.toLowerCase().includes(needle);
    const local: IChoice[] = branches.local
      .filter(b => matches(b.name))
      .map(b => ({
        kind: 'local',
        name: b.name,
        detail: b.subject,
        current: b.name === branches.current && !branches.detached
      }));
    const localNames = new Set(branches.local.map(b => b.name));
    const remote: IChoice[] = branches.remote
      .filter(b => matches(b.name) && !b.name.endsWith('/HEAD'))
      .map(b => ({
        kind: 'remote',
        name: b.name,
        detail: localNames.has(b.name.slice(b.remote.length + 1))
          ? ''
          : trans.__('creates a local tracking branch'),
        current: false
      }));
    const name = filter.trim();
    const exists =
      localNames.has(name) || branches.remote.some(b => b.name === name);
    const create: IChoice[] =
      name && !exists && plausibleBranchName(name)
        ? [{ kind: 'create', name, detail: '', current: false }]
        : [];
    return [...create, ...local, ...remote];
  })();

  React.useEffect(() => {
    listRef.current
      ?.querySelector(`[data-index="${active}"]`)
      ?.scrollIntoView({ block: 'nearest' });
  }, [active]);

  const choose = (choice: IChoice | undefined): void => {
    if (!choice) {
      return;
    }
    if (choice.kind === 'create') {
      props.onCreate(choice.name);
    } else if (!choice.current) {
      props.onCheckout(choice.name);
    } else {
      props.onClose();
    }
  };

  const onKeyDown = (event: React.KeyboardEvent): void => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      setActive(
        moveActive(active, event.key === 'ArrowDown' ? 1 : -1, choices.length)
      );
    } else if (event.key === 'Enter') {
      event.preventDefault();
      choose(choices[active]);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      props.onClose();
    }
  };

  let lastKind: IChoice['kind'] | null = null;
  const headings: Record<IChoice['kind'], string> = {
    create: '',
    local: trans.__('Branches'),
    remote: trans.__('Remote branches')
  };

  return (
    <div
      className={CSS.switcher}
      role="dialog"
      aria-label={trans.__('Switch branch')}
      onKeyDown={onKeyDown}
      onBlur={event => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) {
          props.onClose();
        }
      }}
    >
      <input
        ref={inputRef}
        className={CSS.switcherInput}
        type="text"
        placeholder={trans.__('Switch to a branch, or name a new one')}
        aria-label={trans.__('Branch name')}
        aria-controls="terax-git-branches"
        aria-activedescendant={
          choices.length ? `terax-git-branch-${active}` : undefined
        }
        spellCheck={false}
        autoComplete="off"
        value={filter}
        onChange={event => {
          setFilter(event.currentTarget.value);
          setActive(0);
        }}
      />
      <div
        ref={listRef}
        id="terax-git-branches"
        className={CSS.switcherList}
        role="listbox"
      >
        {!branches ? (
          <div className={CSS.empty}>{trans.__('Loading branches…')}</div>
        ) : choices.length === 0 ? (
          <div className={CSS.empty}>{trans.__('No branch matches.')}</div>
        ) : (
          choices.map((choice, index) => {
            const heading =
              choice.kind !== lastKind && headings[choice.kind] ? (
                <div className={CSS.switcherHeading} role="presentation">
                  {headings[choice.kind]}
                </div>
              ) : null;
            lastKind = choice.kind;
            return (
              <React.Fragment key={`${choice.kind}:${choice.name}`}>
                {heading}
                <div
                  id={`terax-git-branch-${index}`}
                  className={CSS.switcherItem}
                  role="option"
                  aria-selected={index === active}
                  data-kind={choice.kind}
                  data-branch={choice.name}
                  data-current={choice.current ? 'true' : undefined}
                  onMouseDown={event => event.preventDefault()}
                  onMouseMove={() => index !== active && setActive(index)}
                  onClick={() => choose(choice)}
                >
                  {choice.kind === 'create' ? (
                    <stageIcon.react tag="span" />
                  ) : choice.current ? (
                    <checkIcon.react tag="span" />
                  ) : (
                    <branchIcon.react tag="span" />
                  )}
                  <span className={`${CSS.switcherItem}-name`}>
                    {choice.kind === 'create'
                      ? trans.__('Create branch “%1”', choice.name)
                      : choice.name}
                  </span>
                  {choice.detail ? (
                    <span className={`${CSS.switcherItem}-detail`}>
                      {choice.detail}
                    </span>
                  ) : null}
                </div>
              </React.Fragment>
            );
          })
        )}
      </div>
    </div>
  );
}
