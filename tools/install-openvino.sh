#!/usr/bin/env bash
# Installs DockTrack's inference engine, OpenVINO's C API, into .openvino/ of the repository:
# the wheel from PyPI (pip download, no install), and from it only what CPU inference of ONNX and
# TFLite models needs: the C headers (include/openvino/c), libopenvino_c and libopenvino, the CPU
# plugin, the ONNX, TFLite and IR front ends, TBB and hwloc (about 95 MB of the wheel's 162), and the
# licence files. The build compiles the engine shim (Sources/CDockEngine) against the headers; the
# programs load the libraries when a detector first needs them (docs/detection.md: the engine).
# Usage: tools/install-openvino.sh [DESTINATION]   (default .openvino; does nothing when all of it is there)
set -euo pipefail
cd "$(dirname "$0")/.."
version=2026.4.1   # also OPENVINO_VERSION in the Makefile and the library suffix .so.2641 in the shim
dest=${1:-.openvino}
marker="$dest/VERSION"
# The IR front end reads models saved in OpenVINO's own format (models/blazeface_*_planar.xml).
libs="libopenvino_c.so.2641 libopenvino.so.2641 libopenvino_intel_cpu_plugin.so libopenvino_onnx_frontend.so.2641
  libopenvino_tensorflow_lite_frontend.so.2641 libopenvino_ir_frontend.so.2641 libtbb.so.12 libtbbmalloc.so.2 libhwloc.so.15"
there=yes
for lib in $libs; do [ -f "$dest/libs/$lib" ] || there=no; done
if [ "$there" = yes ] && [ -f "$marker" ] && [ "$(cat "$marker")" = "$version" ]; then exit 0; fi
python=$(command -v python3 || true)
[ -n "$python" ] || { echo "install-openvino.sh: python3 with pip is needed to fetch OpenVINO from PyPI" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "fetching OpenVINO $version (PyPI wheel, C API and CPU libraries only) into $dest"
"$python" -m pip download -q --no-deps --only-binary=:all: "openvino==$version" -d "$work" \
  || { echo "install-openvino.sh: pip could not download openvino==$version from PyPI" >&2; exit 1; }
wheel=$(ls "$work"/openvino-*.whl)
members="openvino/include/openvino/c/*"
for lib in $libs; do members="$members openvino/libs/$lib"; done
"$python" - "$wheel" "$work/x" $members <<'PY'
import fnmatch, sys, zipfile
wheel, out, patterns = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    names = z.namelist()
    wanted = [n for n in names if any(fnmatch.fnmatch(n, p) for p in patterns)
              or ("dist-info/licenses/" in n or n.endswith("dist-info/LICENSE"))]
    missing = [p for p in patterns if not any(fnmatch.fnmatch(n, p) for n in names)]
    if missing:
        sys.exit("install-openvino.sh: the wheel lacks " + ", ".join(missing))
    for n in wanted:
        z.extract(n, out)
PY
rm -rf "$dest.new"
mkdir -p "$dest.new/include" "$dest.new/licenses"
cp -r "$work/x/openvino/include/openvino" "$dest.new/include/"
cp -r "$work/x/openvino/libs" "$dest.new/libs"
cp -r "$work"/x/openvino-*.dist-info/licenses/. "$dest.new/licenses/" 2>/dev/null || true
echo "$version" > "$dest.new/VERSION"
rm -rf "$dest"
mv "$dest.new" "$dest"
echo "OpenVINO $version: $(du -sh "$dest" | cut -f1) in $dest"
