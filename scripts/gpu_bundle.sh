#!/usr/bin/env bash
# Packs a CUDA build for a GPU host that has the CUDA toolkit, NCCL and PyTorch but not the Debian
# packages ddpsim links (SimGrid, GSL, cJSON, OpenBLAS, OpenMPI): the build's programs, the shared
# libraries they load (all but glibc's, libstdc++/libgcc_s and the CUDA toolkit's cuBLAS and NCCL,
# which the host has), and OpenMPI's run time (mpirun, orted, its components and help files) so that
# `ddpsim validate` can start ranks there. Unpacked in DEST, scripts/gpu_check.sh --bundle DEST uses it.
#
# DEST is where the bundle will be unpacked on the host, an absolute path: the programs look for
# their libraries in DEST/lib (their RPATH, set here with patchelf), the libraries beside themselves
# ($ORIGIN). CTest's files name the build and the sources by their absolute paths here: for ctest
# there, make both reachable under the same paths (docs/testing.md, "On a GPU").
#   cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build-gpu
#   scripts/gpu_bundle.sh build-gpu .gpu/bundle.tar.xz "$PWD/.gpu"
# usage: scripts/gpu_bundle.sh BUILD_DIR OUT.tar.xz DEST
set -euo pipefail
[[ $# -eq 3 && $3 == /* ]] || { echo "usage: scripts/gpu_bundle.sh BUILD_DIR OUT.tar.xz DEST (absolute)" >&2; exit 2; }
build=$1 out=$2 dest=$3
[[ -x $build/sim/ddpsim && -x $build/calib/ddpcalib ]] || { echo "gpu_bundle.sh: $build has no ddpsim/ddpcalib" >&2; exit 2; }
command -v patchelf >/dev/null || { echo "gpu_bundle.sh: needs patchelf (apt-get install patchelf)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/ompi/usr/bin" "$stage/ompi/usr/lib/x86_64-linux-gnu/openmpi/lib" "$stage/ompi/usr/share"

# The build: programs, scripts CTest runs and its files, without objects and static libraries.
tar -C "$(dirname "$build")" --exclude='*.o' --exclude='*.a' --exclude='CMakeFiles' \
  -cf - "$(basename "$build")" | tar -C "$stage" -xf -

# Shared libraries, resolved through symbolic links, named by the soname the programs ask for.
skip='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcublas|libcublasLt|libnccl|libcuda)\.so'
ompi=/usr/lib/x86_64-linux-gnu/openmpi
objs=$(find "$build" -type f -perm -u+x ! -path '*/CMakeFiles/*' ! -name '*.sh' ! -name '*.py';
       ls /usr/bin/orterun /usr/bin/orted "$ompi"/lib/openmpi3/*.so)
for o in $objs; do
  ldd "$o" 2>/dev/null | awk '/=> \//{print $1, $3}'
done | sort -u | while read -r name path; do
  [[ $name =~ $skip ]] && continue
  cp -L "$path" "$stage/lib/$name"
done

# Programs find the libraries in DEST/lib; the libraries (and OpenMPI's programs) beside themselves.
find "$stage/$(basename "$build")" -type f -perm -u+x ! -name '*.sh' ! -name '*.py' | while read -r f; do
  if file -b "$f" | grep -q '^ELF'; then patchelf --force-rpath --set-rpath "$dest/lib" "$f"; fi
done
for f in "$stage"/lib/*; do patchelf --set-rpath '$ORIGIN' "$f"; done

# OpenMPI's run time, laid out as under /usr, for OPAL_PREFIX=DEST/ompi/usr.
cp -L /usr/bin/orterun /usr/bin/orted "$stage/ompi/usr/bin/"
ln -s orterun "$stage/ompi/usr/bin/mpirun"
cp -a "$ompi/lib/openmpi3" "$stage/ompi/usr/lib/x86_64-linux-gnu/openmpi/lib/"
for f in "$stage"/ompi/usr/bin/orte* "$stage"/ompi/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so; do
  patchelf --force-rpath --set-rpath "$dest/lib" "$f"
done
cp -a /usr/share/openmpi "$stage/ompi/usr/share/"

tar -C "$stage" -cJf "$out.tmp" . && mv "$out.tmp" "$out"
echo "gpu_bundle.sh: $out ($(du -h "$out" | cut -f1)): $(ls "$stage/lib" | wc -l) libraries, build $(basename "$build")"
