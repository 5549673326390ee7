/**
 * The Terax JupyterLab extension: its plugins and public tokens.
 */
import type { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { goToFilePlugin } from './plugins/gotofile';
import { searchInFilesPlugin } from './plugins/searchfiles';

export { IGoToFile } from './gotofile/tokens';
export { ISearchInFiles } from './searchfiles/tokens';

const plugins: JupyterFrontEndPlugin<unknown>[] = [
  goToFilePlugin,
  searchInFilesPlugin
];

export default plugins;
