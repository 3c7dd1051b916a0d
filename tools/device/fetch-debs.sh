#!/bin/sh
# Here (Debian 12): download what tools/device/gpu-proof.sh needs on a lent GPU
# machine that has no GLib headers or pkg-config, into .devdeps/ (ignored: add
# /.devdeps/ to .git/info/exclude, and name .devdeps in the run call's carry).
set -eu
cd "$(dirname "$0")/../.."
mkdir -p .devdeps
cd .devdeps
apt-get download libglib2.0-0 libglib2.0-dev libglib2.0-dev-bin libglib2.0-bin \
  libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3 \
  pkgconf-bin libpkgconf3 pkgconf
du -sh .
