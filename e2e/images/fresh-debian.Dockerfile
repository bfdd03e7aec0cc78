# A fresh Debian 12 machine for the install tests (e2e/images/install.test.ts): systemd as PID 1, curl, sudo, and
# nothing of Postern's. What the installer would download from Debian's mirrors (iproute2, wireguard-tools,
# wireguard-go and their dependencies) is fetched here, at build time, into apt's cache but not installed: the
# install then runs offline, on a Docker network without a way out, and still goes through apt-get as on any
# machine. strace records every program the install runs (the test's proof that the token is nobody's argument).
ARG DEBIAN_IMAGE=postern-local/debian:bookworm-slim
FROM ${DEBIAN_IMAGE}
# The base image's docker-clean deletes downloaded packages after every apt run: a real machine keeps them.
RUN rm -f /etc/apt/apt.conf.d/docker-clean \
 && apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      systemd systemd-sysv curl ca-certificates sudo strace procps \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends --download-only \
      iproute2 wireguard-tools wireguard-go \
 # Units a container has no use for (terminals, udev, clock sync) only slow the boot down.
 && systemctl mask getty.target console-getty.service systemd-udevd.service systemd-udev-trigger.service \
      systemd-timesyncd.service systemd-logind.service apt-daily.timer apt-daily-upgrade.timer >/dev/null 2>&1 \
 && true
ENV container=docker
STOPSIGNAL SIGRTMIN+3
CMD ["/sbin/init"]
