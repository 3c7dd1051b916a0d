#!/usr/bin/env bash
# Installs into a temporary prefix (meson install --destdir) and runs the installed programs
# from there: they must find their data relative to the install prefix, not the build tree.
set -euo pipefail
build=$1
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null
prefix=$(meson introspect "$build" --buildoptions | /usr/bin/python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
bindir=$dest$prefix/bin
test -x "$bindir/formulate-cli"
"$bindir/formulate-cli" --version
FE_NO_SOURCE_TREE=1 "$bindir/formulate-cli" --list-devices
if [ -x "$bindir/formulate" ]; then
  "$bindir/formulate" --version
fi
test -f "$dest$prefix/share/applications/"*.desktop
test -f "$dest$prefix/share/metainfo/"*.metainfo.xml
test -f "$dest$prefix/share/icons/hicolor/scalable/apps/"*.svg
echo "installed and ran from $prefix under $dest"
