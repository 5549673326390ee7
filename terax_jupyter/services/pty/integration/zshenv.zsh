# Terax shell integration for zsh, step 1 (.zshenv): read the user's own .zshenv.
# Terax points ZDOTDIR at a folder whose files source this; the user's folder is kept in
# TERAX_USER_ZDOTDIR and restored at the end of .zshrc, so .zlogin and later reads are theirs.
__terax_zdotdir="$ZDOTDIR"
ZDOTDIR="${TERAX_USER_ZDOTDIR:-$HOME}"
[[ -r "$ZDOTDIR/.zshenv" ]] && source "$ZDOTDIR/.zshenv"
TERAX_USER_ZDOTDIR="$ZDOTDIR"
ZDOTDIR="$__terax_zdotdir"
unset __terax_zdotdir
