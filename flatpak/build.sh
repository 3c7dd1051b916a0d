#!/usr/bin/env bash
# Builds and installs the Flatpak where Flathub is reachable (not on the project's CI machine):
#   flatpak/build.sh            build into ./build-flatpak and install for the user
#   flatpak/build.sh --bundle   also write formulate.flatpak
set -euo pipefail
cd "$(dirname "$0")/.."
manifest=flatpak/io.github.formulate.Formulate.json
flatpak remote-add --user --if-not-exists flathub https://dl.flathub.org/repo/flathub.flatpakrepo
flatpak install --user -y flathub org.gnome.Platform//47 org.gnome.Sdk//47
flatpak-builder --user --install --force-clean --repo=build-flatpak-repo build-flatpak "$manifest"
if [ "${1:-}" = --bundle ]; then
  flatpak build-bundle build-flatpak-repo formulate.flatpak io.github.formulate.Formulate
fi
