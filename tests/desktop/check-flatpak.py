#!/usr/bin/python3
"""Checks the Flatpak manifest against the rules in flatpak/README.md: a released GNOME
runtime, the app id, only the listed finish-args (no network), every archive pinned by
sha256, and the app built with meson. Also runs `flatpak-builder --show-manifest` when present."""
import json, re, shutil, subprocess, sys

path = sys.argv[1]
m = json.load(open(path))
errors = []
def need(cond, msg):
    if not cond:
        errors.append(msg)

need(m.get("id") == "io.github.formulate.Formulate", "id must be io.github.formulate.Formulate")
need(m.get("runtime") == "org.gnome.Platform", "runtime must be org.gnome.Platform")
need(m.get("sdk") == "org.gnome.Sdk", "sdk must be org.gnome.Sdk")
need(re.fullmatch(r"4[3-9]|[5-9]\d", str(m.get("runtime-version", ""))) is not None,
     "runtime-version must be a released GNOME version with GTK >= 4.8 (43 or later)")
need(m.get("command") == "formulate", "command must be formulate")
allowed = {"--share=ipc", "--socket=wayland", "--socket=fallback-x11", "--device=dri",
           "--filesystem=xdg-documents:ro"}
for a in m.get("finish-args", []):
    need(a in allowed, f"finish-arg not allowed: {a}")
need("--share=network" not in m.get("finish-args", []), "no network permission")
mods = m.get("modules", [])
need(mods and mods[-1].get("name") == "formulate" and mods[-1].get("buildsystem") == "meson",
     "the last module builds formulate with meson")
for mod in mods:
    need(isinstance(mod, dict) and "name" in mod and "sources" in mod, f"module without name/sources: {mod}")
    for s in mod.get("sources", []):
        if s.get("type") in ("archive", "file"):
            need(re.fullmatch(r"[0-9a-f]{64}", s.get("sha256", "")) is not None,
                 f"{mod['name']}: {s.get('url')} is not pinned by sha256")
            need(s.get("url", "").startswith("https://"), f"{mod['name']}: source must be https")
if shutil.which("flatpak-builder"):
    r = subprocess.run(["flatpak-builder", "--show-manifest", path], capture_output=True, text=True)
    need(r.returncode == 0, "flatpak-builder --show-manifest failed: " + r.stderr.strip())
else:
    print("flatpak-builder not installed: structural checks only")
for e in errors:
    print("manifest:", e)
print("manifest OK" if not errors else f"{len(errors)} problem(s)")
sys.exit(1 if errors else 0)
