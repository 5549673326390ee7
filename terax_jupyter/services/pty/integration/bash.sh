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
  __terax_running=0
  __terax_at_prompt=0
  __terax_histcmd=""

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

  __terax_precmd() {
    local status=$?
    if [ "$__terax_running" = 1 ]; then
      printf '\e]133;D;%s;nonce=%s\a' "$status" "$__terax_nonce"
      __terax_running=0
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
    __terax_at_prompt=1
    return $status
  }

  __terax_preexec() {
    [ "$__terax_at_prompt" = 1 ] || return 0
    case "$BASH_COMMAND" in
      __terax_precmd*) __terax_at_prompt=0; return 0 ;;  # the next prompt: nothing ran
      __terax_*) return 0 ;;
    esac
    __terax_at_prompt=0
    local line
    line="$(HISTTIMEFORMAT='' builtin history 1)"
    if [ -n "$line" ] && [ "${HISTCMD-}" != "$__terax_histcmd" ]; then
      __terax_histcmd="${HISTCMD-}"
      line="${line#"${line%%[![:space:]]*}"}"
      line="${line#*[[:space:]]}"
      line="${line#"${line%%[![:space:]]*}"}"
    else
      line="$BASH_COMMAND"
    fi
    __terax_running=1
    printf '\e]133;C;nonce=%s;cmdline_url=%s\a' "$__terax_nonce" "$(__terax_urlencode "$line")"
  }

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
    __terax_user_debug_trap="$(trap -p DEBUG)"
    __terax_user_debug_trap="${__terax_user_debug_trap#trap -- \'}"
    __terax_user_debug_trap="${__terax_user_debug_trap%\' DEBUG}"
    __terax_debug() {
      __terax_preexec
      if [ -n "$__terax_user_debug_trap" ]; then
        eval "$__terax_user_debug_trap"
      fi
    }
    trap '__terax_debug' DEBUG
  fi
fi
