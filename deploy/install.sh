#!/bin/sh
# Installs the Postern node client on Debian, Ubuntu or Raspberry Pi OS (amd64 or arm64), connects this machine to the
# gateway and keeps it connected across reboots (systemd service postern-node). The gateway serves this file at
# https://<gateway>/install.sh, beside the client and its checksums (https://<gateway>/downloads/); the console's
# node-ready dialog shows the command that runs it:
#
#   { curl -fsS --pinnedpubkey 'sha256//<pin>' -k https://gw.example.com/install.sh
#     echo "postern_install --url https://gw.example.com --pin 'sha256:<pin>' --token 'pstn_…'"
#   } | sudo sh
#
# The pin makes curl accept only the gateway's own (self-signed) certificate; with a certificate from a public CA the
# command has neither --pinnedpubkey, -k nor --pin. The script defines functions only: the echoed last line runs the
# install, so a download cut short runs nothing, and the token is never an argument of any process (`ps` shows every
# process's arguments to every user of the machine; here it travels inside the pipe, then into `postern connect`
# through its standard input). `sh install.sh --url … --pin …` works too and asks for the token on the terminal
# (or --token-file FILE).
#
# What it does, in this order, so that a wrong pin or a tampered download stops it before anything is installed or the
# token is sent: download SHA256SUMS, the client for this architecture and the systemd unit over the pinned
# connection; check each against SHA256SUMS; install iproute2 and wireguard-tools (and wireguard-go where the kernel
# has no WireGuard) with apt-get; install /usr/local/bin/postern; `postern connect`; install and start
# postern-node.service (`postern connect --daemon`). `postern uninstall` removes the service, the binary, /etc/postern
# and the interface.
set -eu

POSTERN_UNIT=/etc/systemd/system/postern-node.service
POSTERN_BIN=/usr/local/bin/postern
POSTERN_CONFIG_DIR=/etc/postern

postern_say() { printf 'postern-install: %s\n' "$*" >&2; }
postern_die() {
  printf 'postern-install: %s\n' "$*" >&2
  exit 1
}

postern_usage() {
  cat >&2 <<'EOF'
Usage: postern_install --url https://GATEWAY [--pin sha256:PIN] [--token TOKEN | --token-file FILE]
       sh install.sh --url https://GATEWAY [--pin sha256:PIN] [--token-file FILE]   (asks for the token)
  --url         the gateway's public HTTPS address, as the console shows it
  --pin         the pin of the gateway's self-signed certificate (console: node-ready dialog)
  --token       the node's access token (only in the console's piped command, never on a command line)
  --token-file  a file holding the token (- for standard input)
EOF
}

# curl to the gateway: HTTPS only, no redirects (a redirect could take the request elsewhere), pinned when a pin is
# given. -k only turns off the CA and host-name check that a self-signed certificate cannot pass; --pinnedpubkey
# still refuses any other key before a byte is sent.
postern_fetch() {
  if [ -n "$postern_curl_pin" ]; then
    curl -fsS --proto '=https' --tlsv1.2 --connect-timeout 20 --pinnedpubkey "$postern_curl_pin" -k \
      -o "$2" "$postern_url/$1"
  else
    curl -fsS --proto '=https' --tlsv1.2 --connect-timeout 20 -o "$2" "$postern_url/$1"
  fi
}

# The SHA-256 SHA256SUMS gives for FILE, then the file's own: equal, or the install stops.
postern_verify() {
  postern_expected="$(awk -v name="$1" '$2 == name || $2 == "*" name { print $1 }' "$postern_tmp/SHA256SUMS")"
  [ -n "$postern_expected" ] || postern_die "SHA256SUMS from the gateway has no checksum of $1: nothing was installed"
  postern_actual="$(sha256sum "$postern_tmp/$1" | cut -d' ' -f1)"
  if [ "$postern_actual" != "$postern_expected" ]; then
    postern_die "$1 from the gateway does not match its checksum (sha256 $postern_actual, SHA256SUMS says $postern_expected): nothing was installed"
  fi
}

postern_is_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# apt-get install of what is missing; the package lists are updated only when the first try fails (a machine whose
# lists are current installs offline from its cache).
postern_apt_install() {
  postern_missing=''
  for postern_package in "$@"; do
    postern_is_installed "$postern_package" || postern_missing="$postern_missing $postern_package"
  done
  [ -n "$postern_missing" ] || return 0
  postern_say "installing$postern_missing (apt-get)"
  # shellcheck disable=SC2086 # one word per package
  # </dev/null: piped into sh, this script's standard input is the pipe; nothing apt runs may read from it.
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $postern_missing \
    </dev/null >"$postern_tmp/apt.log" 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null >>"$postern_tmp/apt.log" 2>&1 || true
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $postern_missing \
      </dev/null >>"$postern_tmp/apt.log" 2>&1 || {
      tail -n 20 "$postern_tmp/apt.log" >&2
      postern_die "apt-get could not install$postern_missing"
    }
  fi
  postern_added_packages="$postern_added_packages$postern_missing"
}

# Kernel WireGuard (Linux 5.6+, Raspberry Pi OS, Ubuntu): `ip link add … type wireguard` works. Otherwise (some
# containers and VPS kernels) the userspace wireguard-go is needed.
postern_has_kernel_wireguard() {
  postern_probe="pstn$$"
  if ip link add dev "$postern_probe" type wireguard 2>/dev/null; then
    ip link delete dev "$postern_probe" 2>/dev/null || true
    return 0
  fi
  return 1
}

postern_install() {
  postern_url=''
  postern_pin=''
  postern_token="${POSTERN_TOKEN:-}"
  postern_token_file=''
  postern_from_argv=0
  while [ "$#" -gt 0 ]; do
    case "$1" in
      --from-argv) postern_from_argv=1 ;;
      --url) [ "$#" -ge 2 ] || postern_die "--url needs a value"; postern_url="$2"; shift ;;
      --pin) [ "$#" -ge 2 ] || postern_die "--pin needs a value"; postern_pin="$2"; shift ;;
      --token)
        [ "$#" -ge 2 ] || postern_die "--token needs a value"
        if [ "$postern_from_argv" -eq 1 ]; then
          postern_die "--token on a command line shows the token to every user of this machine (ps): use the console's command, --token-file FILE, or leave it out to be asked"
        fi
        postern_token="$2"
        shift
        ;;
      --token-file) [ "$#" -ge 2 ] || postern_die "--token-file needs a value"; postern_token_file="$2"; shift ;;
      -h | --help) postern_usage; return 0 ;;
      *) postern_usage; postern_die "unknown argument: $1" ;;
    esac
    shift
  done

  # --- what was given ---------------------------------------------------------------------------------------------
  [ -n "$postern_url" ] || { postern_usage; postern_die "--url is required"; }
  postern_url="${postern_url%/}"
  # An https:// origin and nothing else: it is put into curl's and postern's arguments and the stored config.
  printf '%s\n' "$postern_url" | grep -Eq '^https://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?$' ||
    postern_die "--url must be the gateway's https:// address without a path, e.g. https://gateway.example.com"
  postern_curl_pin=''
  if [ -n "$postern_pin" ]; then
    printf '%s\n' "$postern_pin" | grep -Eq '^sha256:[A-Za-z0-9+/]{43}=$' ||
      postern_die "--pin must look like sha256:<44 characters of base64>, as the console shows it"
    postern_curl_pin="sha256//${postern_pin#sha256:}"
  fi
  [ "$(id -u)" -eq 0 ] || postern_die "run it as root (sudo sh)"
  if [ -n "$postern_token_file" ]; then
    if [ "$postern_token_file" = - ]; then
      IFS= read -r postern_token || true
    else
      [ -r "$postern_token_file" ] || postern_die "cannot read $postern_token_file"
      IFS= read -r postern_token <"$postern_token_file" || true
    fi
  fi
  if [ -z "$postern_token" ] && [ -r /dev/tty ] && [ -w /dev/tty ]; then
    printf 'Access token of this node (shown once in the console): ' >/dev/tty
    stty -echo </dev/tty 2>/dev/null || true
    IFS= read -r postern_token </dev/tty || true
    stty echo </dev/tty 2>/dev/null || true
    printf '\n' >/dev/tty
  fi
  printf '%s\n' "$postern_token" | grep -Eq '^pstn_[0-9A-Za-z]{42}$' ||
    postern_die "no valid access token (pstn_ and 42 letters or digits): copy the command again from the console"

  # --- this machine ---------------------------------------------------------------------------------------------
  case "$(uname -m)" in
    x86_64 | amd64) postern_arch=x64 ;;
    aarch64 | arm64) postern_arch=arm64 ;;
    armv7l | armv6l | armhf) postern_die "32-bit ARM is not supported: install the 64-bit Raspberry Pi OS (or another arm64 system)" ;;
    *) postern_die "unsupported architecture $(uname -m): the client exists for amd64 and arm64" ;;
  esac
  command -v apt-get >/dev/null 2>&1 || postern_die "apt-get not found: this installer is for Debian, Ubuntu and Raspberry Pi OS"
  for postern_tool in curl sha256sum gzip awk; do
    command -v "$postern_tool" >/dev/null 2>&1 || postern_die "$postern_tool not found: install it first (apt-get install $postern_tool)"
  done

  postern_tmp="$(mktemp -d /tmp/postern-install.XXXXXX)"
  # shellcheck disable=SC2064 # the directory is known now
  trap "rm -rf '$postern_tmp'" EXIT
  trap 'exit 130' INT TERM
  postern_added_packages=''

  # --- downloads, checked before anything is installed -------------------------------------------------------------
  postern_client="postern-linux-$postern_arch.gz"
  postern_say "downloading the client ($postern_arch) from $postern_url"
  for postern_file in SHA256SUMS "$postern_client" postern-node.service; do
    postern_fetch "downloads/$postern_file" "$postern_tmp/$postern_file" ||
      postern_die "could not download $postern_url/downloads/$postern_file (curl's message above): nothing was installed"
  done
  postern_verify "$postern_client"
  postern_verify postern-node.service
  gzip -dc "$postern_tmp/$postern_client" >"$postern_tmp/postern" || postern_die "$postern_client is damaged: nothing was installed"

  # --- packages -------------------------------------------------------------------------------------------------------
  postern_apt_install iproute2 wireguard-tools
  if postern_has_kernel_wireguard; then
    postern_say "WireGuard: in the kernel"
  else
    postern_say "WireGuard: not in this kernel, using wireguard-go"
    postern_apt_install wireguard-go
  fi

  # --- the client -------------------------------------------------------------------------------------------------
  install -m 0755 "$postern_tmp/postern" "$POSTERN_BIN.new"
  case "$("$POSTERN_BIN.new" --version 2>/dev/null || true)" in
    "postern "*) ;;
    *)
      rm -f "$POSTERN_BIN.new"
      postern_die "the downloaded client does not run on this machine"
      ;;
  esac
  mv -f "$POSTERN_BIN.new" "$POSTERN_BIN"
  postern_say "installed $("$POSTERN_BIN" --version) as $POSTERN_BIN"

  postern_systemd=0
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then postern_systemd=1; fi
  # A reinstall: the running service would fight the new connect over the interface.
  if [ "$postern_systemd" -eq 1 ]; then systemctl stop postern-node.service >/dev/null 2>&1 || true; fi

  # --- connect: the token goes in through standard input, never as an argument ----------------------------------------
  set -- connect --url "$postern_url" --token-file -
  if [ -n "$postern_pin" ]; then set -- "$@" --pin "$postern_pin"; fi
  if ! printf '%s\n' "$postern_token" | "$POSTERN_BIN" "$@"; then
    postern_die "postern connect failed (its message above); the client is installed: run the console's command again once fixed"
  fi
  postern_token=''
  if [ -n "$postern_added_packages" ]; then
    # For `postern uninstall`, which names them (it does not remove packages other programs may use).
    # shellcheck disable=SC2086 # one package a line
    printf '%s\n' $postern_added_packages >"$POSTERN_CONFIG_DIR/installed-packages"
  fi

  # --- the service ------------------------------------------------------------------------------------------------
  if [ "$postern_systemd" -eq 0 ]; then
    postern_say "no systemd here: the tunnel is up now but will not come back after a reboot; run \`postern connect --daemon\` from your init system"
    return 0
  fi
  install -m 0644 "$postern_tmp/postern-node.service" "$POSTERN_UNIT"
  systemctl daemon-reload
  systemctl enable postern-node.service >/dev/null 2>&1
  systemctl restart postern-node.service
  postern_waited=0
  until "$POSTERN_BIN" status --health >/dev/null 2>&1; do
    postern_waited=$((postern_waited + 1))
    if [ "$postern_waited" -ge 30 ]; then
      postern_say "the service runs but the tunnel does not answer yet: see \`journalctl -u postern-node\` and \`postern status\`"
      return 0
    fi
    sleep 1
  done
  postern_say "connected; the service postern-node keeps it so across reboots (postern status; postern uninstall removes it all)"
}

# Arguments (`sh install.sh --url …`, `curl … | sh -s -- --url …`): install now. Piped without arguments, as the
# console's command does: nothing runs until its echoed `postern_install …` line.
if [ "$#" -gt 0 ]; then postern_install --from-argv "$@"; fi
