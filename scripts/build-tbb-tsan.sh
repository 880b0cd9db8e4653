#!/usr/bin/env bash
# Builds oneTBB with ThreadSanitizer for `./build.sh test --tsan` and installs it in <prefix>.
#
# Why: Debian's libtbb is not instrumented. TSan then cannot see the synchronisation inside
# TBB's scheduler (a task spawned on one thread and run on another, task_group::wait, reuse of
# TBB's task memory) and reports every such hand-off as a data race in symbind code. An
# instrumented libtbb of the same version as Debian's headers makes that synchronisation
# visible, so the TSan build needs no suppressions for symbind code.
#
# Usage: scripts/build-tbb-tsan.sh <prefix>
# Source: $SYMBIND_TBB_SOURCE if set (an unpacked oneTBB tree), otherwise Debian's own source
# package of the installed libtbb-dev (onetbb 2021.8.0 on Debian 12), fetched with apt-get
# source from the machine's Debian mirror (a deb-src entry is added for this call only).
set -euo pipefail
prefix=$(realpath -m "$1")
if [ -f "$prefix/lib/cmake/TBB/TBBConfig.cmake" ]; then exit 0; fi  # already built
work="$prefix.build"
version=$(dpkg-query -W -f='${Version}' libtbb-dev 2>/dev/null | sed 's/-.*//' || true)
version=${version:-2021.8.0}
src=${SYMBIND_TBB_SOURCE:-$work/src}
if [ ! -f "$src/CMakeLists.txt" ]; then
  echo "build-tbb-tsan: fetching Debian's onetbb $version source package" >&2
  apt_dir="$work/apt"
  mkdir -p "$apt_dir/lists/partial" "$work/debsrc"
  # The deb-src twin of every Debian repository this machine already uses.
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && sed -n 's/^Types: *deb *$/Types: deb-src/p; /^URIs:\|^Suites:\|^Components:\|^Signed-By:/p; /^$/p' "$f"
  done >"$apt_dir/debsrc.sources"
  apt_opts=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt_dir" -o Dir::State::Lists="$apt_dir/lists")
  apt-get "${apt_opts[@]}" update >/dev/null
  (cd "$work/debsrc" && apt-get "${apt_opts[@]}" source --download-only "onetbb=$(dpkg-query -W -f='${Version}' libtbb-dev)" >/dev/null 2>&1)
  mkdir -p "$src"
  tar -xf "$work"/debsrc/onetbb_*.orig.tar.* -C "$src" --strip-components=1
fi
jobs=$(nproc 2>/dev/null || echo 2)
# TBB_STRICT=OFF: TBB's -Werror would turn warnings of newer compilers into errors.
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBB_SANITIZE=thread \
  -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF -DTBB_STRICT=OFF -DTBBMALLOC_BUILD=OFF \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
# GCC warns that TSan ignores atomic_thread_fence (TBB's sleep/wake path uses one); the log
# keeps that noise out of the terminal.
if ! cmake --build "$work/build" -j "$jobs" >"$work/build.log" 2>&1; then
  tail -40 "$work/build.log" >&2
  exit 1
fi
cmake --install "$work/build" >/dev/null
echo "build-tbb-tsan: instrumented oneTBB $version in $prefix" >&2
