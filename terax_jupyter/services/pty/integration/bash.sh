# Terax shell integration for bash: OSC 7 (cwd) and OSC 133 (prompt, command, exit code).
# Loaded with `bash --rcfile`; it reads the user's own startup files first, then adds hooks.

if [ -n "${TERAX_LOGIN_SHELL-}" ]; then
  unset TERAX_LOGIN_SHELL
  [ -r /etc/profile ] && . /etc/profile
  for __terax_file in "$HOME/.bash_profile" "$HOME/.bash_login" "$HOME/.profile"; do
    if [ -r "$__terax_file" ]; then
      . "$__terax_file"
      break
    fi
  done
  unset __terax_file
else
  [ -r /etc/bash.bashrc ] && . /etc/bash.bashrc
  [ -r "$HOME/.bashrc" ] && . "$HOME/.bashrc"
fi

if [ -z "${__terax_installed-}" ] && [ -n "${TERAX_NONCE-}" ]; then
  __terax_installed=1
  __terax_nonce="$TERAX_NONCE"
  unset TERAX_NONCE
  __terax_running=0  # a command line was read; its D mark is due at the next prompt
  __terax_sent=0     # its C mark was printed
  __terax_at_prompt=0
  __terax_histcmd=0
  # bash 4.4+ shows PS0 once a command line is read, before any of it runs (a subshell
  # included, which no DEBUG trap sees): the C mark goes there. Older bash: the DEBUG trap.
  __terax_ps0=0
  if ((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4))); then
    __terax_ps0=1
  fi

  __terax_urlencode() {
    local LC_ALL=C text="$1" out="" char index
    for ((index = 0; index < ${#text}; index++)); do
      char="${text:index:1}"
      case "$char" in
        [a-zA-Z0-9.~_/-]) out+="$char" ;;
        *) printf -v char '%%%02X' "'$char"; out+="$char" ;;
      esac
    done
    printf '%s' "$out"
  }

  __terax_history_line() {
    local line
    line="$(HISTTIMEFORMAT='' builtin history 1)"
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line#*[[:space:]]}"
    line="${line#"${line%%[![:space:]]*}"}"
    printf '%s' "$line"
  }

  __terax_command_mark() {
    printf '\e]133;C;nonce=%s;cmdline_url=%s\a' "$__terax_nonce" "$(__terax_urlencode "$1")"
  }

  # Runs in PS0's command substitution, so it can print but not set our variables; the
  # arithmetic after it in PS0 does that in this shell.
  __terax_ps0_mark() {
    if ((${HISTCMD:-0} != __terax_histcmd)); then
      __terax_command_mark "$(__terax_history_line)"
    fi
  }
  __terax_ps0_hook='$(__terax_ps0_mark)${__terax_void[(__terax_running=1)+(__terax_sent=${HISTCMD:-0}!=__terax_histcmd)+(__terax_histcmd=${HISTCMD:-0})]-}'

  __terax_precmd() {
    local status=$?
    if [ "$__terax_running" = 1 ]; then
      # Neither PS0 nor the DEBUG trap named it (an unrecorded line that ran no simple command).
      [ "$__terax_sent" = 1 ] || __terax_command_mark "$(__terax_history_line)"
      printf '\e]133;D;%s;nonce=%s\a' "$status" "$__terax_nonce"
      __terax_running=0
      __terax_sent=0
    fi
    printf '\e]7;file://%s%s\a' "${HOSTNAME-}" "$(__terax_urlencode "$PWD")"
    return $status
  }

  __terax_wrap_prompt() {
    local status=$?
    case "$PS1" in
      *'133;A;nonce='*) ;;
      *) PS1="\[\e]133;A;nonce=${__terax_nonce}\a\]${PS1}\[\e]133;B;nonce=${__terax_nonce}\a\]" ;;
    esac
    # The continuation prompt (an unclosed quote or block): the line is not complete yet.
    case "${PS2-}" in
      *'133;P;k=c;nonce='*) ;;
      *) PS2="\[\e]133;P;k=c;nonce=${__terax_nonce}\a\]${PS2-> }" ;;
    esac
    if [ "$__terax_ps0" = 1 ]; then
      case "${PS0-}" in
        *__terax_ps0_mark*) ;;
        *) PS0="$__terax_ps0_hook${PS0-}" ;;
      esac
    fi
    __terax_at_prompt=1
    return $status
  }

  __terax_preexec() {
    case "$BASH_COMMAND" in
      __terax_precmd*) __terax_at_prompt=0; return 0 ;;  # the next prompt: nothing ran
      __terax_*) return 0 ;;
    esac
    local line
    if [ "$__terax_ps0" = 1 ]; then
      # PS0 named the line unless the history did not record it (a duplicate, a line that
      # starts with a space, history off): then the first command run names it.
      [ "$__terax_running" = 1 ] && [ "$__terax_sent" = 0 ] || return 0
      line="$(__terax_history_line)"
      [[ "$line" == "$BASH_COMMAND"* ]] || line="$BASH_COMMAND"
    else
      [ "$__terax_at_prompt" = 1 ] || return 0
      __terax_at_prompt=0
      line="$(__terax_history_line)"
      if [ -z "$line" ] || [ "${HISTCMD:-0}" = "$__terax_histcmd" ]; then
        line="$BASH_COMMAND"
      fi
      __terax_histcmd="${HISTCMD:-0}"
      __terax_running=1
    fi
    __terax_sent=1
    __terax_command_mark "$line"
  }

  # The run API's barrier: a key no terminal sends. Read in order with what was typed ahead,
  # it empties the line editor and answers with a mark, so what comes after is the run's.
  # bash redraws the prompt after a `bind -x` command: the mark says so.
  __terax_sync() {
    READLINE_LINE=""
    READLINE_POINT=0
    printf '\e]133;P;k=s;redraw=1;nonce=%s\a' "$__terax_nonce"
  }
  bind -m emacs -x '"\e[9871~": __terax_sync' 2>/dev/null
  bind -m vi-insert -x '"\e[9871~": __terax_sync' 2>/dev/null
  # In vi's command mode the key enters insert mode first, where the line is typed.
  bind -m vi-command '"\e[9871~": "i\e[9871~"' 2>/dev/null

  if declare -p PROMPT_COMMAND 2>/dev/null | grep -q '^declare -a'; then
    PROMPT_COMMAND=(__terax_precmd "${PROMPT_COMMAND[@]}" __terax_wrap_prompt)
  else
    __terax_user_prompt_command="${PROMPT_COMMAND-}"
    # Trailing separators ("hook;") would make "hook;; next" a syntax error.
    while [[ "$__terax_user_prompt_command" == *[[:space:]\;] ]]; do
      __terax_user_prompt_command="${__terax_user_prompt_command%?}"
    done
    PROMPT_COMMAND="__terax_precmd${__terax_user_prompt_command:+; $__terax_user_prompt_command}"
    PROMPT_COMMAND+="; __terax_wrap_prompt"
    unset __terax_user_prompt_command
  fi

  if declare -p preexec_functions >/dev/null 2>&1; then
    # bash-preexec owns the DEBUG trap; join it instead of replacing it.
    preexec_functions+=(__terax_preexec)
  else
    # `trap -p` quotes the command for the shell ('\'' for each quote); undo that to run it.
    __terax_user_debug_trap="$(trap -p DEBUG)"
    __terax_user_debug_trap="${__terax_user_debug_trap#trap -- \'}"
    __terax_user_debug_trap="${__terax_user_debug_trap%\' DEBUG}"
    __terax_user_debug_trap="${__terax_user_debug_trap//\'\\\'\'/\'}"
    __terax_debug() {
      __terax_preexec
      if [ -n "$__terax_user_debug_trap" ]; then
        eval "$__terax_user_debug_trap"
      fi
    }
    trap '__terax_debug' DEBUG
  fi
fi
