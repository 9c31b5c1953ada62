# Sourced by the scripts under scripts/: `-h` or `--help` prints the calling script's opening
# comment (its usage) and exits, before anything is built, installed or started. A script
# whose settings are all environment variables refuses any other argument the same way,
# with exit status 2, instead of ignoring it; one with a command line of its own (the
# server scripts: start DIR PORT, ...) prints its usage, exit 2, when given too few words.

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

# `needs_arguments N "$@"`: for a script with a command line of its own, at least N words;
# fewer print its usage, exit 2.
needs_arguments() {
    local n=$1
    shift
    help_if_asked "$@"
    [ $# -ge "$n" ] || { script_usage >&2; exit 2; }
}

# `takes_no_arguments "$@"`: for a script whose settings are environment variables.
takes_no_arguments() {
    help_if_asked "$@"
    [ $# -eq 0 ] && return 0
    { printf '%s: unexpected argument %s (it takes none):\n\n' "$0" "$1"; script_usage; } >&2
    exit 2
}
