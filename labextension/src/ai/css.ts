/**
 * CSS class names of the AI side panel.
 */
export namespace CSS {
  export const panel = 'jp-TeraxAi';
  export const header = 'jp-TeraxAi-header';
  export const title = 'jp-TeraxAi-title';
  export const headerButtons = 'jp-TeraxAi-headerButtons';
  export const iconButton = 'jp-TeraxAi-iconButton';
  export const modelBar = 'jp-TeraxAi-modelBar';
  export const select = 'jp-TeraxAi-select';
  export const modelSelect = 'jp-TeraxAi-modelSelect';
  export const toggle = 'jp-TeraxAi-toggle';
  export const body = 'jp-TeraxAi-body';
  export const scroller = 'jp-TeraxAi-scroller';
  export const empty = 'jp-TeraxAi-empty';
  export const notice = 'jp-TeraxAi-notice';
  export const connection = 'jp-TeraxAi-connection';

  // sessions
  export const sessions = 'jp-TeraxAi-sessions';
  export const search = 'jp-TeraxAi-search';
  export const sessionList = 'jp-TeraxAi-sessionList';
  export const session = 'jp-TeraxAi-session';
  export const sessionTitle = 'jp-TeraxAi-sessionTitle';
  export const sessionMeta = 'jp-TeraxAi-sessionMeta';
  export const sessionActions = 'jp-TeraxAi-sessionActions';
  export const renameInput = 'jp-TeraxAi-renameInput';

  // chat
  export const chat = 'jp-TeraxAi-chat';
  export const turn = 'jp-TeraxAi-turn';
  export const prompt = 'jp-TeraxAi-prompt';
  export const promptContext = 'jp-TeraxAi-promptContext';
  export const screenshot = 'jp-TeraxAi-screenshot';
  export const answer = 'jp-TeraxAi-answer';
  export const markdown = 'jp-TeraxAi-markdown';
  export const codeTools = 'jp-TeraxAi-codeTools';
  export const codeButton = 'jp-TeraxAi-codeButton';
  export const reasoning = 'jp-TeraxAi-reasoning';
  export const note = 'jp-TeraxAi-note';
  export const cutNote = 'jp-TeraxAi-cutNote';
  export const turnFooter = 'jp-TeraxAi-turnFooter';
  export const working = 'jp-TeraxAi-working';
  export const tool = 'jp-TeraxAi-tool';
  export const toolHeader = 'jp-TeraxAi-toolHeader';
  export const toolName = 'jp-TeraxAi-toolName';
  export const toolSubject = 'jp-TeraxAi-toolSubject';
  export const toolStatus = 'jp-TeraxAi-toolStatus';
  export const toolMeta = 'jp-TeraxAi-toolMeta';
  export const toolBody = 'jp-TeraxAi-toolBody';
  export const toolChildren = 'jp-TeraxAi-toolChildren';
  export const label = 'jp-TeraxAi-label';
  export const pre = 'jp-TeraxAi-pre';

  // approvals, plan, banners
  export const approvals = 'jp-TeraxAi-approvals';
  export const approval = 'jp-TeraxAi-approval';
  export const approvalTitle = 'jp-TeraxAi-approvalTitle';
  export const approvalCommand = 'jp-TeraxAi-approvalCommand';
  export const approvalNote = 'jp-TeraxAi-approvalNote';
  export const workflowDetails = 'jp-TeraxAi-workflowDetails';
  export const cellsToRun = 'jp-TeraxAi-cellsToRun';
  export const actions = 'jp-TeraxAi-actions';
  export const button = 'jp-TeraxAi-button';
  export const primary = 'jp-TeraxAi-primary';
  export const danger = 'jp-TeraxAi-danger';
  export const diff = 'jp-TeraxAi-diff';
  export const diffAdd = 'jp-TeraxAi-diffAdd';
  export const diffDel = 'jp-TeraxAi-diffDel';
  export const diffHunk = 'jp-TeraxAi-diffHunk';
  export const counts = 'jp-TeraxAi-counts';
  export const plan = 'jp-TeraxAi-plan';
  export const planItem = 'jp-TeraxAi-planItem';
  export const banner = 'jp-TeraxAi-banner';
  export const bannerMessage = 'jp-TeraxAi-bannerMessage';
  export const todos = 'jp-TeraxAi-todos';
  export const todo = 'jp-TeraxAi-todo';
  export const suggestion = 'jp-TeraxAi-suggestion';
  export const rules = 'jp-TeraxAi-rules';
  export const rule = 'jp-TeraxAi-rule';
  export const ruleNote = 'jp-TeraxAi-ruleNote';
  export const ruleWarning = 'jp-TeraxAi-ruleWarning';

  // composer
  export const composer = 'jp-TeraxAi-composer';
  export const input = 'jp-TeraxAi-input';
  export const composerRow = 'jp-TeraxAi-composerRow';
  export const composerHint = 'jp-TeraxAi-composerHint';
  export const composerProblem = 'jp-TeraxAi-composerProblem';
  export const chips = 'jp-TeraxAi-chips';
  export const chip = 'jp-TeraxAi-chip';
  export const picker = 'jp-TeraxAi-picker';
  export const pickerItem = 'jp-TeraxAi-pickerItem';
  export const send = 'jp-TeraxAi-send';
  export const stop = 'jp-TeraxAi-stop';
  export const planBadge = 'jp-TeraxAi-planBadge';

  // settings
  export const settings = 'jp-TeraxAi-settings';
  export const field = 'jp-TeraxAi-field';
  export const fieldRow = 'jp-TeraxAi-fieldRow';
  export const fieldGrid = 'jp-TeraxAi-fieldGrid';
  export const textInput = 'jp-TeraxAi-textInput';
  export const keyState = 'jp-TeraxAi-keyState';
  export const testResult = 'jp-TeraxAi-testResult';
  export const completionStatus = 'jp-TeraxAi-completionStatus';
  export const hint = 'jp-TeraxAi-hint';
  export const modelPicker = 'jp-TeraxAi-modelPicker';
  export const modelList = 'jp-TeraxAi-modelList';
  export const listingFailed = 'jp-TeraxAi-listingFailed';
  export const testing = 'jp-TeraxAi-testing';
  export const disclosure = 'jp-TeraxAi-disclosure';
  export const checkRow = 'jp-TeraxAi-checkRow';
  export const connect = 'jp-TeraxAi-connect';
  export const connectChoice = 'jp-TeraxAi-connectChoice';
  export const section = 'jp-TeraxAi-section';
  export const agent = 'jp-TeraxAi-agent';
  export const toolChecks = 'jp-TeraxAi-toolChecks';

  // states (modifiers)
  export const active = 'jp-mod-active';
  export const ok = 'jp-mod-ok';
  export const error = 'jp-mod-error';
}
