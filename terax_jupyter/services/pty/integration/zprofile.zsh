# Terax shell integration for zsh, step 2 (.zprofile, login shells): the user's .zprofile.
__terax_zdotdir="$ZDOTDIR"
ZDOTDIR="$TERAX_USER_ZDOTDIR"
[[ -r "$ZDOTDIR/.zprofile" ]] && source "$ZDOTDIR/.zprofile"
ZDOTDIR="$__terax_zdotdir"
unset __terax_zdotdir
