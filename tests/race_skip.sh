# SPDX-License-Identifier: MIT
# tests/race_skip.sh - sourced by the gdb-driven race tests
# (integration/handover_race.sh, integration/snapshot_race.sh,
# reliability/reentry_race.sh).
#
# race_cannot_run WHY: the test cannot make its interleaving happen here
# (no gdb, or gdb may not trace). A developer's machine skips it (77); CI
# (FDRTRACE_CI=1, set by .ci/run, which installs gdb and allows ptrace)
# fails, so that a green CI run means the races were run.
race_cannot_run() {
  if [[ ${FDRTRACE_CI:-0} == 1 ]]; then
    echo "FAIL: $1: this race test could not run, and FDRTRACE_CI=1 requires it" \
         "(.ci/run installs gdb and allows ptrace; see docs/reliability.md)"
    exit 1
  fi
  echo "SKIP: $1"
  exit 77
}
