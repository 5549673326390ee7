/**
 * Source control: the Git side panel and the History panel.
 */
export * from './css';
export * from './diffview';
export * from './difftab';
export * from './history';
export * from './historymodel';
export * from './icons';
export * from './model';
export * from './panel';
export * from './watch';
