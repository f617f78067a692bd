# Sourced by the job scripts beside it (sbatch runs a copy of a job script, so they find this
# file in the checkout): one-line errors and the look-up of a flag's value among their arguments.

die() { echo "Error: $*" >&2; exit 1; }

flag_value() {   # flag_value NAME ARGS...: the value of --NAME V or --NAME=V, else nothing
    local name=$1; shift
    while [ $# -gt 0 ]; do
        case "$1" in
            "--$name") echo "${2:-}"; return ;;
            "--$name="*) echo "${1#*=}"; return ;;
        esac
        shift
    done
}
