import './base.css';
import './gotofile.css';
import './searchfiles.css';
