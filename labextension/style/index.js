import '@xterm/xterm/css/xterm.css';
import './base.css';
import './ai.css';
import './aireview.css';
import './git.css';
import './gotofile.css';
import './searchfiles.css';
import './terminal.css';
