# shellcheck shell=bash
# Sourced by test.sh and test-arm64.sh: a Docker daemon for the image tests. No systemd here, so dockerd is started
# by hand when none answers, and stopped again by stop_dockerd only if it was started here.
docker="${docker:-/usr/bin/docker}"
dockerd_pid=''

start_dockerd() {
  if "$docker" info >/dev/null 2>&1; then return 0; fi
  mkdir -p artifacts
  setsid /usr/sbin/dockerd >artifacts/dockerd.log 2>&1 &
  dockerd_pid=$!
  local deadline=$((SECONDS + 60))
  until "$docker" info >/dev/null 2>&1; do
    if ! kill -0 "$dockerd_pid" 2>/dev/null; then echo "dockerd exited; see artifacts/dockerd.log" >&2; return 1; fi
    if [ "$SECONDS" -ge "$deadline" ]; then echo "dockerd did not answer within 60 s; see artifacts/dockerd.log" >&2; return 1; fi
    sleep 0.5
  done
}

stop_dockerd() {
  if [ -n "$dockerd_pid" ] && kill -0 "$dockerd_pid" 2>/dev/null; then
    kill -TERM "$dockerd_pid"
    for _ in $(seq 1 100); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.2; done
  fi
}
