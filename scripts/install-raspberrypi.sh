#!/usr/bin/env bash
# Installs the Event Handler as a systemd service on a Raspberry Pi (or any Debian-like Linux with systemd).
# Run it as root; running it again upgrades the jar and the unit and keeps the configuration.
# The whole procedure, with an example local cloud: docs/arrowhead.md.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: sudo scripts/install-raspberrypi.sh [--jar PATH] [--root DIR] [--no-systemctl]

Installs or upgrades the Event Handler as the systemd service 'eventhandler':
  /opt/eventhandler/eventhandler.jar           the server (replaced on every run)
  /etc/eventhandler/eventhandler.properties    its configuration (written only if absent)
  /etc/eventhandler/logback.xml                logging configuration (written only if absent)
  /etc/eventhandler/eventhandler.env           EH_* overrides such as passwords, mode 600 (only if absent)
  /etc/eventhandler/certificates/              key store and trust store for secure mode
  /var/lib/eventhandler/                       data: the H2 event store
  /etc/systemd/system/eventhandler.service     the unit, JVM sized for a 1 GB board (replaced on every run)
It creates the system user 'eventhandler', enables the service and (re)starts it when the jar or the unit
changed. Logs go to the journal: journalctl -u eventhandler.

Options:
  --jar PATH       the shaded jar to install (default: eventhandler-core/target/eventhandler.jar of this
                   checkout, built with Maven if it is missing)
  --root DIR       install into DIR instead of / (a staging tree or image): no user is created, no owner
                   is changed and systemctl is not run
  --no-systemctl   do not run systemctl (in a container or chroot)
  -h, --help       this text
EOF
}

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar=""
root=""
systemctl=true

while [[ $# -gt 0 ]]; do
  case "$1" in
    --jar) jar="${2:?--jar needs a path}"; shift 2 ;;
    --jar=*) jar="${1#--jar=}"; shift ;;
    --root) root="${2:?--root needs a directory}"; shift 2 ;;
    --root=*) root="${1#--root=}"; shift ;;
    --no-systemctl) systemctl=false; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install-raspberrypi.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

say() { echo "install-raspberrypi.sh: $*"; }
fail() { echo "install-raspberrypi.sh: $*" >&2; exit 1; }

staging=false
if [[ -n "$root" ]]; then
  staging=true
  systemctl=false
  mkdir -p "$root"
  root="$(cd "$root" && pwd)"
elif [[ $EUID -ne 0 ]]; then
  fail "run it as root (sudo), or with --root DIR to stage the files somewhere else"
fi

# --- Java 17 or newer ------------------------------------------------------------------------------------
java_bin="$(command -v java || true)"
java_major=0
if [[ -n "$java_bin" ]]; then
  # 'openjdk version "17.0.15" ...' or 'java version "1.8.0_381"'
  version="$("$java_bin" -version 2>&1 | awk -F'"' '/version/ {print $2; exit}')"
  java_major="${version%%.*}"
  [[ "$java_major" == 1 ]] && java_major="$(echo "$version" | cut -d. -f2)"
  java_bin="$(readlink -f "$java_bin")"
fi
if [[ ! "$java_major" =~ ^[0-9]+$ || "$java_major" -lt 17 ]]; then
  message="Java 17 or newer is needed${java_bin:+ (found $java_bin, version ${version:-unknown})}; on Raspberry Pi OS or Debian: sudo apt-get update && sudo apt-get install -y openjdk-17-jre-headless"
  if $staging; then
    say "warning: $message"
  else
    fail "$message"
  fi
fi
# The unit names the JVM by the path that stays valid across Debian's Java updates.
unit_java=/usr/bin/java
if ! $staging && [[ ! -x "$unit_java" ]]; then
  unit_java="$java_bin"
fi

# --- the jar ---------------------------------------------------------------------------------------------
if [[ -z "$jar" ]]; then
  jar="$repo/eventhandler-core/target/eventhandler.jar"
  if [[ ! -f "$jar" ]]; then
    command -v mvn >/dev/null || fail "$jar is missing and Maven is not installed: build the jar with 'mvn -DskipTests package' (on any machine) and pass it with --jar"
    say "building $jar"
    (cd "$repo" && mvn -B -q -DskipTests package)
  fi
fi
[[ -f "$jar" ]] || fail "no jar at $jar"

# --- user and directories --------------------------------------------------------------------------------
user=eventhandler
if ! $staging && ! id -u "$user" >/dev/null 2>&1; then
  useradd --system --user-group --home-dir /var/lib/eventhandler --no-create-home --shell /usr/sbin/nologin \
    --comment "Arrowhead Event Handler" "$user"
  say "created the system user $user"
fi

# own OWNER:GROUP PATH... (skipped when staging: the user exists on the target only)
own() {
  $staging || chown "$@"
}

opt="$root/opt/eventhandler"
etc="$root/etc/eventhandler"
data="$root/var/lib/eventhandler"
unit_dir="$root/etc/systemd/system"
mkdir -p "$opt" "$etc/certificates" "$data" "$unit_dir"
chmod 0755 "$opt"
chmod 0750 "$etc" "$etc/certificates" "$data"
own root:"$user" "$etc" "$etc/certificates"
own "$user":"$user" "$data"

changed=false

# install_file SOURCE TARGET MODE: replaces TARGET atomically, only if its content differs.
install_file() {
  if [[ -f "$2" ]] && cmp -s "$1" "$2"; then
    return 1
  fi
  cp "$1" "$2.new"
  chmod "$3" "$2.new"
  mv -f "$2.new" "$2"
}

if install_file "$jar" "$opt/eventhandler.jar" 0644; then
  say "installed $opt/eventhandler.jar"
  changed=true
fi

# --- configuration: written once, then the operator's ----------------------------------------------------
properties="$etc/eventhandler.properties"
# The key stores of this layout, for secure mode. A key store set while secure mode is off stops the start
# (it could not take effect), so they are written commented out, to be uncommented with server.ssl.enabled=true.
key_store_line='server.ssl.key-store=/etc/eventhandler/certificates/eventhandler.p12'
trust_store_line='server.ssl.trust-store=/etc/eventhandler/certificates/truststore.p12'
secure_note='# For secure mode, uncomment with server.ssl.enabled=true (set while it is false, it stops the start):'
if [[ -f "$properties" ]]; then
  say "kept $properties"
  # Earlier versions wrote these lines uncommented; the server now refuses them while secure mode is off.
  if ! grep -qiE '^[[:space:]]*server\.ssl\.enabled[[:space:]]*=[[:space:]]*true' "$properties" \
      && ! grep -qiE '^EH_SERVER_SSL_ENABLED=true' "$etc/eventhandler.env" 2>/dev/null \
      && grep -qxF -e "$key_store_line" -e "$trust_store_line" "$properties"; then
    sed -e "s|^${key_store_line//./\\.}\$|${secure_note}\n#${key_store_line}|" \
        -e "s|^${trust_store_line//./\\.}\$|${secure_note}\n#${trust_store_line}|" \
        "$properties" > "$properties.new"
    chmod --reference="$properties" "$properties.new"
    mv "$properties.new" "$properties"
    say "commented out the key store paths in $properties: secure mode is off, and this version refuses them then"
  fi
else
  # The defaults, with the paths of this layout: the working directory is /var/lib/eventhandler, and
  # relative paths would point there.
  sed -e 's|^store\.url=.*|store.url=jdbc:h2:file:/var/lib/eventhandler/eventhandler|' \
      -e "s|^server\\.ssl\\.key-store=.*|${secure_note}\\n#${key_store_line}|" \
      -e "s|^server\\.ssl\\.trust-store=.*|${secure_note}\\n#${trust_store_line}|" \
      "$repo/config/eventhandler.properties" > "$properties.new"
  chmod 0640 "$properties.new"
  mv "$properties.new" "$properties"
  say "wrote $properties"
fi
own root:"$user" "$properties"

logback="$etc/logback.xml"
if [[ -f "$logback" ]]; then
  say "kept $logback"
else
  install -m 0640 "$repo/config/logback.xml" "$logback"
  say "wrote $logback"
fi
own root:"$user" "$logback"

env_file="$etc/eventhandler.env"
if [[ -f "$env_file" ]]; then
  say "kept $env_file"
else
  (umask 077 && cat > "$env_file" <<'EOF'
# Read by systemd (as root) before it starts the Event Handler; keep secrets here, not in
# eventhandler.properties. Any key of eventhandler.properties can be set as EH_ + the key in upper case with
# '.' and '-' as '_'; these win over the file. Apply with: sudo systemctl restart eventhandler
#EH_SERVER_SSL_KEY_STORE_PASSWORD=
#EH_SERVER_SSL_TRUST_STORE_PASSWORD=
#EH_STORE_PASSWORD=
# Replaces the unit's JVM options (heap, collector), e.g. on a board with 2 GB or more:
#JAVA_OPTS=-Xms128m -Xmx512m -XX:MaxMetaspaceSize=128m -Xss512k -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError
EOF
  )
  say "wrote $env_file"
fi
chmod 0600 "$env_file"

# --- the systemd unit ------------------------------------------------------------------------------------
unit="$unit_dir/eventhandler.service"
unit_new="$(mktemp)"
trap 'rm -f "$unit_new"' EXIT
cat > "$unit_new" <<EOF
# Written by scripts/install-raspberrypi.sh, which replaces it on every run: put changes in a drop-in
# (sudo systemctl edit eventhandler) and JVM options in /etc/eventhandler/eventhandler.env.
[Unit]
Description=Arrowhead Event Handler
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=$user
Group=$user
WorkingDirectory=/var/lib/eventhandler
# Sized for a 1 GB board that also runs other systems: a 256 MB heap holds the default replay window and
# queues with room to spare; the serial collector suits 1-4 cores and small heaps; a thread stack of 512 KB
# is plenty for the server's bounded thread pools. Out of memory ends the JVM, and systemd restarts it.
Environment="JAVA_OPTS=-Xms64m -Xmx256m -XX:MaxMetaspaceSize=96m -XX:ReservedCodeCacheSize=64m -Xss512k -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError"
EnvironmentFile=-/etc/eventhandler/eventhandler.env
ExecStart=$unit_java \$JAVA_OPTS -Dlogback.configurationFile=/etc/eventhandler/logback.xml -jar /opt/eventhandler/eventhandler.jar --config=/etc/eventhandler/eventhandler.properties
# SIGTERM: the server stops accepting, drains subscribers and the event store, and exits 0 within
# server.shutdown-grace-seconds (plus arrowhead.service-registry.timeout-seconds to unregister).
SuccessExitStatus=143
TimeoutStopSec=60
Restart=on-failure
RestartSec=5
LimitNOFILE=65536

NoNewPrivileges=yes
ProtectSystem=strict
ReadWritePaths=/var/lib/eventhandler
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
RestrictSUIDSGID=yes
RestrictRealtime=yes
RestrictNamespaces=yes
LockPersonality=yes
# AF_NETLINK: the JDK may list network interfaces through it (the advertised address when server.host=0.0.0.0).
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK
CapabilityBoundingSet=
UMask=0027

[Install]
WantedBy=multi-user.target
EOF
if install_file "$unit_new" "$unit" 0644; then
  say "installed $unit"
  changed=true
fi

# --- start -----------------------------------------------------------------------------------------------
if $systemctl; then
  systemctl daemon-reload
  systemctl enable eventhandler.service >/dev/null
  if $changed || ! systemctl is-active --quiet eventhandler.service; then
    systemctl restart eventhandler.service
    say "(re)started eventhandler: systemctl status eventhandler; journalctl -u eventhandler -f"
  else
    say "nothing changed; eventhandler keeps running"
  fi
else
  say "systemctl not run; on the target: systemctl daemon-reload && systemctl enable --now eventhandler"
fi
