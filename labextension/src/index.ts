/**
 * The Terax JupyterLab extension: its plugins and public tokens.
 */
import type { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { gitPlugin } from './plugins/git';
import { goToFilePlugin } from './plugins/gotofile';
import { searchInFilesPlugin } from './plugins/searchfiles';
import { terminalPlugin } from './plugins/terminal';

export { IGoToFile } from './gotofile/tokens';
export { ISearchInFiles } from './searchfiles/tokens';
export { ITeraxTerminals } from './terminal/tokens';
export type { AskHandler, IBlockQuestion } from './terminal/tokens';

const plugins: JupyterFrontEndPlugin<unknown>[] = [
  gitPlugin,
  goToFilePlugin,
  searchInFilesPlugin,
  terminalPlugin
];

export default plugins;
