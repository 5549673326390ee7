# Terax shell integration for zsh, step 3 (.zshrc): the user's .zshrc, then the hooks:
# OSC 7 (cwd) and OSC 133 (prompt, command, exit code). ZDOTDIR goes back to the user's.
ZDOTDIR="$TERAX_USER_ZDOTDIR"
unset TERAX_USER_ZDOTDIR
[[ -r "$ZDOTDIR/.zshrc" ]] && source "$ZDOTDIR/.zshrc"
[[ "$ZDOTDIR" == "$HOME" ]] && unset ZDOTDIR

if [[ -z "${__terax_installed-}" && -n "${TERAX_NONCE-}" ]]; then
  typeset -g __terax_installed=1
  typeset -g __terax_nonce="$TERAX_NONCE"
  unset TERAX_NONCE
  typeset -g __terax_running=0

  __terax_urlencode() {
    emulate -L zsh
    setopt extendedglob
    local LC_ALL=C
    print -rn -- "${1//(#b)([^A-Za-z0-9.~_\/-])/%${(l:2::0:)$(( [##16] #match ))}}"
  }

  __terax_precmd() {
    local terax_status=$?
    if [[ "$__terax_running" == 1 ]]; then
      print -rn -- $'\e]133;D;'"${terax_status};nonce=${__terax_nonce}"$'\a'
      __terax_running=0
    fi
    print -rn -- $'\e]7;file://'"${HOST}$(__terax_urlencode "$PWD")"$'\a'
    return $terax_status
  }

  __terax_wrap_prompt() {
    if [[ "$PS1" != *"133;A;nonce="* ]]; then
      PS1=$'%{\e]133;A;nonce='"${__terax_nonce}"$'\a%}'"${PS1}"$'%{\e]133;B;nonce='"${__terax_nonce}"$'\a%}'
    fi
    # The continuation prompt (an unclosed quote or block): the line is not complete yet.
    if [[ "$PS2" != *"133;P;k=c;nonce="* ]]; then
      PS2=$'%{\e]133;P;k=c;nonce='"${__terax_nonce}"$'\a%}'"${PS2}"
    fi
  }

  __terax_preexec() {
    __terax_running=1
    print -rn -- $'\e]133;C;nonce='"${__terax_nonce};cmdline_url=$(__terax_urlencode "$1")"$'\a'
  }

  # The run API's barrier: a key no terminal sends. Read in order with what was typed ahead,
  # it empties the line editor and answers with a mark, so what comes after is the run's.
  __terax_sync() {
    BUFFER=""
    [[ "$KEYMAP" == vicmd ]] && zle -K viins  # the line is typed in insert mode
    print -rn -- $'\e]133;P;k=s;nonce='"${__terax_nonce}"$'\a'
  }
  zle -N __terax_sync
  for __terax_keymap in emacs viins vicmd; do
    bindkey -M "$__terax_keymap" $'\e[9871~' __terax_sync
  done
  unset __terax_keymap

  # The status hook first (it must see $? untouched), the prompt wrapper last (after themes).
  precmd_functions=(__terax_precmd $precmd_functions __terax_wrap_prompt)
  preexec_functions+=(__terax_preexec)
fi
