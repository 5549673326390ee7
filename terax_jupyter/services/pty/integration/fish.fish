# Terax shell integration for fish: OSC 7 (cwd) and OSC 133 (prompt, command, exit code).
# Sourced with `fish --init-command` after the user's own configuration.
if not set -q __terax_installed; and set -q TERAX_NONCE
    set -g __terax_installed 1
    set -g __terax_nonce $TERAX_NONCE
    set -e TERAX_NONCE
    set -g __terax_running 0

    function __terax_preexec --on-event fish_preexec
        # fish runs this for a line of blanks too; bash and zsh run nothing: no block.
        string length -q -- (string trim -- $argv[1]); or return
        set -g __terax_running 1
        printf '\e]133;C;nonce=%s;cmdline_url=%s\a' $__terax_nonce (string escape --style=url -- $argv[1])
    end

    function __terax_postexec --on-event fish_postexec
        set -l terax_status $status
        if test "$__terax_running" = 1
            printf '\e]133;D;%s;nonce=%s\a' $terax_status $__terax_nonce
            set -g __terax_running 0
        end
    end

    function __terax_cwd --on-event fish_prompt
        printf '\e]7;file://%s%s\a' (hostname) (string escape --style=url -- $PWD)
    end

    functions -q fish_prompt; and functions -c fish_prompt __terax_user_prompt
    function fish_prompt
        set -l terax_status $status
        printf '\e]133;A;nonce=%s\a' $__terax_nonce
        __terax_bind_sync
        if functions -q __terax_user_prompt
            # Give the user's prompt the status it expects.
            __terax_set_status $terax_status
            __terax_user_prompt
        end
        printf '\e]133;B;nonce=%s\a' $__terax_nonce
    end

    # The run API's barrier: a key no terminal sends. Read in order with what was typed
    # ahead, it empties the line editor and answers with a mark, so what comes after is the run's.
    function __terax_sync
        commandline ""
        if test "$fish_key_bindings" = fish_vi_key_bindings; and test "$fish_bind_mode" != insert
            # The line is typed in insert mode; the prompt is redrawn after this (the mark
            # says so: its end, B, is the barrier's point).
            set fish_bind_mode insert
            commandline -f repaint
            printf '\e]133;P;k=s;redraw=1;nonce=%s\a' $__terax_nonce
        else
            printf '\e]133;P;k=s;nonce=%s\a' $__terax_nonce
        end
    end
    # Bound again at every prompt: switching key bindings (fish_vi_key_bindings) erases them.
    function __terax_bind_sync
        for mode in default insert visual
            bind -M $mode \e\[9871~ __terax_sync
        end
    end

    function __terax_set_status
        return $argv[1]
    end
end
