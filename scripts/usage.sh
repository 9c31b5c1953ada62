# Sourced by the scripts under scripts/: `-h` or `--help` prints the calling script's opening
# comment (its usage) and exits, before anything is built, installed or started. A script
# whose settings are all environment variables refuses any other argument the same way,
# with exit status 2, instead of ignoring it.

# The calling script's opening comment, from its second line to its `set -` line.
script_usage() {
    sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//;p}' "$0"
}

# `help_if_asked "$@"`: for a script that passes its arguments on.
help_if_asked() {
    local a
    for a in "$@"; do
        case "$a" in -h | --help) script_usage; exit 0 ;; esac
    done
}

# `takes_no_arguments "$@"`: for a script whose settings are environment variables.
takes_no_arguments() {
    help_if_asked "$@"
    [ $# -eq 0 ] && return 0
    { printf '%s: unexpected argument %s (it takes none):\n\n' "$0" "$1"; script_usage; } >&2
    exit 2
}
