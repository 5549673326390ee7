/**
 * The Terax JupyterLab extension: its plugins and public tokens.
 */
import type { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { aiPlugin } from './plugins/ai';
import { aiCompletionPlugin } from './plugins/aicompletion';
import { aiReviewPlugin } from './plugins/aireview';
import { gitPlugin } from './plugins/git';
import { goToFilePlugin } from './plugins/gotofile';
import { liveNotebooksPlugin } from './plugins/livenotebooks';
import { policyPlugin } from './plugins/policy';
import { previewPlugin } from './plugins/preview';
import { searchInFilesPlugin } from './plugins/searchfiles';
import { terminalPlugin } from './plugins/terminal';

export { ITeraxAi } from './ai/tokens';
export { IGoToFile } from './gotofile/tokens';
export { ITeraxPolicy } from './policy/tokens';
export { ITeraxPreview } from './preview/tokens';
export { ISearchInFiles } from './searchfiles/tokens';
export { ITeraxTerminals } from './terminal/tokens';
export type {
  AskHandler,
  IBlockQuestion,
  IServerEvent,
  LinkHandler
} from './terminal/tokens';

const plugins: JupyterFrontEndPlugin<unknown>[] = [
  aiPlugin,
  aiCompletionPlugin,
  aiReviewPlugin,
  gitPlugin,
  goToFilePlugin,
  liveNotebooksPlugin,
  policyPlugin,
  previewPlugin,
  searchInFilesPlugin,
  terminalPlugin
];

export default plugins;
