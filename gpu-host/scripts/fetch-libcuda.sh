#!/usr/bin/env bash
# Unpacks libcuda.so from Debian's non-free `libcuda1` package into DIR, so that a program with CUDA
# support (gpu-host's `cuda` feature, through the `cust` crate) can be linked on a machine without
# the NVIDIA driver. Prints DIR, which holds lib64/libcuda.so, for CUDA_LIBRARY_PATH:
#
#   export CUDA_LIBRARY_PATH=$(bash path/to/gpu-host/scripts/fetch-libcuda.sh target/libcuda)
#
# Nothing is installed: the package is fetched with `apt-get download` through a private source list
# and state directory (the system's apt configuration is left as it is) and unpacked with `dpkg -x`.
# The GPU machine loads its own driver's libcuda.so.1 at run time; this copy is only linked against.
# Needs Debian (or a derivative with Debian's archive keyring), apt-get, dpkg and network access.
# Usage: fetch-libcuda.sh [DIR]   (default: target/libcuda under the current directory)
#
# The directory goes to standard output alone; the line to use goes to standard error.
set -euo pipefail

dir="$(realpath -m "${1:-$PWD/target/libcuda}")"
done_msg() {
    echo "fetch-libcuda.sh: libcuda.so is in $dir/lib64; build with CUDA_LIBRARY_PATH=$dir" >&2
    echo "$dir"
}
if [ -e "$dir/lib64/libcuda.so" ]; then
    done_msg
    exit 0
fi
for tool in apt-get dpkg; do
    command -v "$tool" >/dev/null || { echo "fetch-libcuda.sh: needs $tool (Debian)" >&2; exit 1; }
done
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || { echo "fetch-libcuda.sh: $keyring is missing (not Debian?)" >&2; exit 1; }
# shellcheck disable=SC1091
suite="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
[ -n "$suite" ] || { echo "fetch-libcuda.sh: no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/unpacked"
echo "deb [signed-by=$keyring] $mirror $suite non-free" >"$tmp/sources.list"
apt=(apt-get -q
    -o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/nonexistent
    -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache"
    -o "APT::Sandbox::User=$(id -un)")
"${apt[@]}" update >&2
(cd "$tmp" && "${apt[@]}" download libcuda1 >&2)
dpkg -x "$tmp"/libcuda1_*.deb "$tmp/unpacked"

mkdir -p "$dir/lib64"
found=0
while IFS= read -r lib; do
    cp -a "$lib" "$dir/lib64/"
    found=1
done < <(find "$tmp/unpacked" -name 'libcuda.so*' \( -type f -o -type l \))
[ "$found" = 1 ] || { echo "fetch-libcuda.sh: libcuda1 holds no libcuda.so*" >&2; exit 1; }
if [ ! -e "$dir/lib64/libcuda.so" ]; then
    ln -sf libcuda.so.1 "$dir/lib64/libcuda.so"
fi
[ -e "$dir/lib64/libcuda.so" ] || { echo "fetch-libcuda.sh: no libcuda.so.1 in libcuda1" >&2; exit 1; }
done_msg
