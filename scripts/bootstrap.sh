#!/usr/bin/env bash
# Installs the system packages Skerry builds against (the SQLite headers and pkg-config) and the
# XML library Foundation's XMLParser loads on Linux (for Xcode model files), and PostgreSQL's client
# library with its headers (libpq, for the SkerryPostgres product; the server is installed only by
# scripts/postgres-server.sh, when tests or benchmarks need one).
# Safe to run again: it installs only what is missing. Needs root or sudo on Debian/Ubuntu.
set -euo pipefail
missing=()
dpkg -s libsqlite3-dev >/dev/null 2>&1 || missing+=(libsqlite3-dev)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
dpkg -s libxml2 >/dev/null 2>&1 || missing+=(libxml2)
dpkg -s libpq-dev >/dev/null 2>&1 || missing+=(libpq-dev)
if ((${#missing[@]} > 0)); then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    echo "bootstrap: installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
