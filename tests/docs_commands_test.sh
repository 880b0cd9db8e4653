#!/usr/bin/env bash
# Runs every ```sh block of README.md and docs/*.md (but the benchmark history) as written: each block is one bash script
# (set -euo pipefail) run in a fresh temporary directory that looks like the clone's root
# after ./build.sh: a symlink to each top-level entry of REPO_DIR, `build` -> BUILD_DIR, and
# `../shared` -> the shared models directory when there is one. The docs install to `~/symbind`
# (a prefix a user owns, as a user would type it): HOME is a directory of its own in the
# temporary directory, so that prefix lands there too, and outputs never reach the clone (the
# build directory gets the install manifest of `cmake --install`, as for install_consumer).
# `python3` is the first python3 with NumPy (PATH, then /usr/bin/python3), as for the Python
# tests. A block passes when every command exits 0; a failure prints the block's output with
# its commands traced.
#
# The line right before a block's fence may say how it is checked instead:
#   <!-- docs-test: covered-by FILE... -->  another step runs it: each command's key (its first
#       two words and the --options right after them) must appear in one of the FILEs (paths
#       in the repository), or the command must be one of the FILEs;
#   <!-- docs-test: slow -->              run only with SYMBIND_DOCS_SLOW=1 (./build.sh in
#       such a block builds REPO_DIR/build: skipped when that is not BUILD_DIR);
#   <!-- docs-test: needs mxnet-python --> run only when SYMBIND_MXNET_PYTHON names MXNet 1.9.1's
#       python/ directory (or the source tree holding it), put on PYTHONPATH for the block;
#   <!-- docs-test: skip REASON -->       never run (REASON required).
# A block that mentions ../shared is skipped when SHARED/models is missing (SHARED:
# SYMBIND_SHARED_DIR, default REPO_DIR/../shared); with SYMBIND_REQUIRE_SHARED set, as in CI,
# that fails instead.
# Usage: tests/docs_commands_test.sh REPO_DIR BUILD_DIR
set -euo pipefail
repo=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
shared=${SYMBIND_SHARED_DIR:-$repo/../shared}
start=$SECONDS

have_shared=0
[ -d "$shared/models" ] && have_shared=1
case "${SYMBIND_REQUIRE_SHARED:-}" in
  "" | 0 | [Oo][Ff][Ff] | [Ff][Aa][Ll][Ss][Ee] | [Nn][Oo]) ;;
  *) [ "$have_shared" = 1 ] || { echo "SYMBIND_REQUIRE_SHARED is set but $shared/models is missing" >&2; exit 1; } ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/docs-commands.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
for py in python3 /usr/bin/python3; do
  # The interpreter itself, not a version manager's shim, which would look under the blocks' HOME.
  if py=$("$py" -c "import numpy, sys; print(sys.executable)" 2>/dev/null </dev/null); then
    ln -s "$py" "$tmp/bin/python3"
    break
  fi
done

# MXNet's Python package, checked once, on first use, through the launcher.
mxnet_python=
mxnet_state=unknown
check_mxnet_python() {
  [ "$mxnet_state" = unknown ] || return 0
  mxnet_state=missing
  local dir=${SYMBIND_MXNET_PYTHON:-}
  [ -n "$dir" ] || return 0
  [ -d "$dir/python/mxnet" ] && dir=$dir/python  # the source tree's root given instead
  if PATH="$tmp/bin:$PATH" PYTHONPATH="$dir" MXNET_LIBRARY_PATH="$build/capi/libmxnet.so" \
     python3 "$repo/tools/python/symbind-python" -c "import mxnet" </dev/null >"$tmp/mxnet-check.log" 2>&1; then
    mxnet_python=$dir
    mxnet_state=ok
  else
    mxnet_state="no 'import mxnet' with PYTHONPATH=$dir: $(tail -1 "$tmp/mxnet-check.log")"
  fi
}

# Covered-by blocks: every command's key must be in one of the named files.
check_covered() {  # FILE:LINE BLOCK_FILE COVERING_FILES...
  local where=$1 text=$2
  shift 2
  local f
  for f in "$@"; do
    [ -f "$repo/$f" ] || { echo "$where: covered-by names $f, which does not exist"; return 1; }
  done
  local line cmd key words w i
  # Commands: continuation lines joined, comments (a # after a blank) and blank lines dropped.
  while IFS= read -r line; do
    cmd=$line
    [[ $cmd =~ (^|[[:space:]])#.*$ ]] && cmd=${cmd%"${BASH_REMATCH[0]}"}
    read -r -a words <<<"$cmd" || true
    [ ${#words[@]} -gt 0 ] || continue
    key=${words[0]}
    [ ${#words[@]} -gt 1 ] && key+=" ${words[1]}"
    for ((i = 2; i < ${#words[@]}; i++)); do
      w=${words[i]}
      [[ $w == --* ]] || break
      key+=" $w"
    done
    local found=0
    for f in "$@"; do
      if [ "${words[0]}" = "$f" ] || [ "${words[0]}" = "./$f" ] || grep -qF -- "$key" "$repo/$f"; then
        found=1
        break
      fi
    done
    [ "$found" = 1 ] || { echo "$where: '$key' is not in $*"; return 1; }
  done < <(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$text")
}

run_block() {  # FILE:LINE BLOCK_FILE NEEDS_MXNET
  local where=$1 text=$2 needs_mxnet=$3
  local dir=$tmp/run
  rm -rf "$dir"
  mkdir -p "$dir/root" "$dir/home"
  local e name
  for e in "$repo"/* "$repo"/.[!.]*; do
    name=${e##*/}
    case "$name" in build | .git) continue ;; esac
    ln -s "$e" "$dir/root/$name"
  done
  ln -s "$build" "$dir/root/build"
  [ "$have_shared" = 1 ] && ln -s "$(cd "$shared" && pwd)" "$dir/shared"
  { echo "set -euo pipefail"; echo "set -x"; cat "$text"; } >"$dir/block.sh"
  local env=(HOME="$dir/home" PATH="$tmp/bin:$PATH")
  [ "$needs_mxnet" = 1 ] && env+=(PYTHONPATH="$mxnet_python")
  local t0=$SECONDS
  if (cd "$dir/root" &&
      env -u PYTHONPATH -u MXNET_LIBRARY_PATH -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH -u CMAKE_PREFIX_PATH \
        "${env[@]}" bash "$dir/block.sh") </dev/null >"$dir/log" 2>&1; then
    echo "$where ran ($((SECONDS - t0)) s)"
  else
    echo "$where FAILED: its output:"
    sed 's/^/    /' "$dir/log"
    return 1
  fi
}

marker_re='^<!-- docs-test: (.*) -->$'
ran=0 skipped=0 covered=0 failed=0
failures=()
shopt -s nullglob
for doc in "$repo/README.md" "$repo"/docs/*.md; do
  rel=${doc#"$repo"/}
  # A record of past measurements (as BENCHMARKS.md, which is not run either): its commands are
  # what was run then, with files of that time, not instructions.
  [ "$rel" = docs/benchmarks-history.md ] && continue
  n=0 in_block=0 prev='' marker='' fence=0
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    if [ "$in_block" = 0 ]; then
      case "$line" in
        '```sh')
          in_block=1 fence=$n block="$tmp/block.txt"
          : >"$block"
          marker=
          if [[ $prev =~ $marker_re ]]; then marker=${BASH_REMATCH[1]}; fi ;;
        '```bash' | '```shell' | '```console' | '```shell-session')
          echo "$rel:$n: a shell block must be \`\`\`sh to be run by this test"
          failed=$((failed + 1)) failures+=("$rel:$n") ;;
        '<!-- docs-test:'*) ;;
        *)
          if [[ $prev == '<!-- docs-test:'* ]]; then
            echo "$rel:$((n - 1)): docs-test marker not right before a \`\`\`sh fence"
            failed=$((failed + 1)) failures+=("$rel:$((n - 1))")
          fi ;;
      esac
      prev=$line
      continue
    fi
    if [ "$line" != '```' ]; then
      printf '%s\n' "$line" >>"$block"
      continue
    fi
    in_block=0 prev=$line
    where="$rel:$fence"
    needs_mxnet=0 status=run why=
    case "$marker" in
      "") ;;
      covered-by\ *)
        read -r -a files <<<"${marker#covered-by }"
        if check_covered "$where" "$block" "${files[@]}"; then
          echo "$where covered by ${files[*]}"
          covered=$((covered + 1))
        else
          failed=$((failed + 1)) failures+=("$where")
        fi
        continue ;;
      slow)
        if [ "${SYMBIND_DOCS_SLOW:-0}" != 1 ]; then
          status=skip why="slow (SYMBIND_DOCS_SLOW=1 runs it)"
        elif grep -q '\./build\.sh' "$block" && ! [ "$repo/build" -ef "$build" ]; then
          status=skip why="./build.sh builds $repo/build, which is not $build"
        fi ;;
      "needs mxnet-python")
        needs_mxnet=1
        check_mxnet_python
        if [ "$mxnet_state" = missing ]; then
          status=skip why="needs MXNet 1.9.1's Python package (set SYMBIND_MXNET_PYTHON to its python/ directory)"
        elif [ "$mxnet_state" != ok ]; then
          status=skip why="SYMBIND_MXNET_PYTHON: $mxnet_state"
        fi ;;
      skip\ ?*) status=skip why=${marker#skip } ;;
      skip | "skip ")
        echo "$where: 'skip' needs a reason"
        failed=$((failed + 1)) failures+=("$where")
        continue ;;
      *)
        echo "$where: unknown docs-test marker '$marker' (covered-by FILE..., slow, needs mxnet-python, skip REASON)"
        failed=$((failed + 1)) failures+=("$where")
        continue ;;
    esac
    if [ "$status" = run ] && [ "$have_shared" = 0 ] && grep -q '\.\./shared' "$block"; then
      status=skip why="needs ../shared: $shared/models not found"
    fi
    if [ "$status" = skip ]; then
      echo "$where skipped: $why"
      skipped=$((skipped + 1))
    elif run_block "$where" "$block" "$needs_mxnet"; then
      ran=$((ran + 1))
    else
      failed=$((failed + 1)) failures+=("$where")
    fi
  done <"$doc"
  if [ "$in_block" = 1 ]; then
    echo "$rel:$fence: unterminated \`\`\`sh block"
    failed=$((failed + 1)) failures+=("$rel:$fence")
  fi
done

total=$((ran + skipped + covered + failed))
echo "docs_commands: $total blocks: $ran ran, $covered covered by other steps, $skipped skipped," \
     "$failed failed ($((SECONDS - start)) s)"
if [ "$failed" -gt 0 ]; then
  echo "failed: ${failures[*]}"
  exit 1
fi
