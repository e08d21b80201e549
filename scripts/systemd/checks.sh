# SPDX-License-Identifier: Apache-2.0
# Sourced by the rig's systemd checks (check, package-check): one ok/FAIL line per check with
# the seconds since the check script started, a failure count, and the unit's properties.

fails=0
t_start=$(cut -d' ' -f1 /proc/uptime)
# Seconds since the check script started (the guest's uptime clock).
since() { awk -v a="$t_start" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN{printf "%.0f", b-a}'; }
# check WHAT CONDITION...: evaluates CONDITION, prints ok or FAIL, counts failures; returns 1
# on failure so a caller can show more (`check ... || journalctl ...`).
check() {
    local what=$1
    shift
    if eval "$@"; then echo "ok   $what ($(since) s)"; else echo "FAIL $what ($(since) s)"; fails=$((fails + 1)); return 1; fi
}
# A property of sprintgate.service (systemctl show -P).
show() { systemctl show -P "$1" sprintgate.service; }
