/**
 * Plugin that loads the administrator's policy once, before the Terax
 * features that follow it start, and shares it as {@link ITeraxPolicy}.
 */
import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';

import { getPolicy } from '../api/policy';
import { PolicyModel } from '../policy/model';
import { ITeraxPolicy } from '../policy/tokens';

/**
 * The policy plugin.
 */
export const policyPlugin: JupyterFrontEndPlugin<ITeraxPolicy> = {
  id: 'terax-jupyter:policy',
  description:
    'The administrator’s policy: which Terax features are on and which settings are locked.',
  autoStart: true,
  provides: ITeraxPolicy,
  activate: async (app: JupyterFrontEnd): Promise<ITeraxPolicy> => {
    try {
      return new PolicyModel(
        await getPolicy(app.serviceManager.serverSettings)
      );
    } catch (error) {
      // An older server without the route: show everything; the server still refuses.
      console.warn('Could not read the Terax policy.', error);
      return new PolicyModel(null);
    }
  }
};
