#!/usr/bin/env bash
# Builds MXNet clients against the installed tree exactly as MXNet users build theirs, after
# moving the installed prefix (it must be relocatable), and runs them without LD_LIBRARY_PATH:
# libmxnet.so must find everything it needs through its RUNPATH. A program built with
# pkg-config finds libmxnet.so through the -rpath mxnet.pc gives; one built with the bare
# `g++ -std=c++11 prog.cpp -I<prefix>/include -L<prefix>/lib -lmxnet` has no path to it, so it
# runs with that one file preloaded (LD_PRELOAD) and nothing else.
#   headers  every mxnet-cpp header compiles alone at -std=c++11 and includes no symbind header;
#            tests/mxnet_cpp_own_headers.cpp with -std=c++11 -Wall -Werror -lmxnet runs; RUNPATHs,
#            no MPI dependency, mxnet.pc (C flags only), versions.
#   predict  predict_client.c (C99, -Wall -Werror, pkg-config mxnet) on a colour classifier made
#            here with scripts/make_color_classifier.py.
#   mlp      mlp_fashion_mnist.cpp (-std=c++11 -lmxnet) trained on Fashion-MNIST for EPOCHS
#            epochs must reach MIN_ACCURACY on the test set.
# Usage: mxnet_client_test.sh <source dir> <build dir> headers|predict|mlp [EPOCHS MIN_ACCURACY]
set -euo pipefail
src=$1 build=$2 mode=$3
fashion=${SYMBIND_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/installed" >/dev/null
mv "$tmp/installed" "$tmp/prefix"
prefix=$tmp/prefix lib=$tmp/prefix/lib
unset LD_LIBRARY_PATH
export PKG_CONFIG_PATH="$lib/pkgconfig"
cd "$tmp"

case "$mode" in
headers)
  for so in libmxnet.so libsymbind.so; do
    readelf -d "$lib/$so" | grep -q 'RUNPATH.*\[\$ORIGIN\]' ||
      { echo "$so: RUNPATH is not \$ORIGIN"; readelf -d "$lib/$so" | grep -i path; exit 1; }
    if ldd "$lib/$so" | grep -q libmpi; then echo "$so depends on MPI:"; ldd "$lib/$so"; exit 1; fi
    if ldd "$lib/$so" | grep -q 'not found'; then echo "$so: a dependency is not found:"; ldd "$lib/$so"; exit 1; fi
  done
  readelf -d "$prefix/bin/symbind" | grep -q 'RUNPATH.*\[\$ORIGIN/../lib\]' ||
    { echo "bin/symbind: RUNPATH is not \$ORIGIN/../lib"; exit 1; }
  # pkg-config: the prefix follows the moved tree; C clients get no C++ flags.
  test "$(pkg-config --variable=prefix mxnet)" -ef "$prefix"
  test "$(pkg-config --variable=prefix symbind)" -ef "$prefix"
  case "$(pkg-config --cflags mxnet)" in *-std=*) echo "mxnet.pc sets a language standard"; exit 1 ;; esac
  # One version everywhere: mxnet.pc's, MXGetVersion's (major*10000+minor*100+patch) and the tool's.
  IFS=. read -r major minor patch <<<"$(pkg-config --modversion mxnet)"
  code=$((major * 10000 + minor * 100 + patch))
  "$prefix/bin/symbind" --version | tee version.txt
  grep -q "MXNet $major.$minor.$patch API, MXGetVersion $code" version.txt
  grep -q "^symbind $(pkg-config --modversion symbind) " version.txt

  for h in $(cd "$prefix/include" && ls mxnet-cpp/*.h); do
    if grep -n '#include <symbind/' "$prefix/include/$h"; then echo "$h includes a symbind header"; exit 1; fi
    echo "#include \"$h\"" | g++ -std=c++11 -Wall -Werror -fsyntax-only -x c++ -I"$prefix/include" - ||
      { echo "$h does not compile alone at -std=c++11"; exit 1; }
  done
  g++ -std=c++11 -Wall -Werror "$src/tests/mxnet_cpp_own_headers.cpp" -o own_headers -I"$prefix/include" -L"$lib" -lmxnet
  LD_PRELOAD=$lib/libmxnet.so.0 ./own_headers | tee own_headers.log
  grep -q "MXGetVersion $code" own_headers.log
  # Without the MPI plugin, only a dist_* KVStore fails, with an error naming the plugin.
  mv "$lib/libsymbind_mpi.so" "$tmp/"
  python3 - "$lib/libmxnet.so" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.MXGetLastError.restype = ctypes.c_char_p
kv = ctypes.c_void_p()
assert lib.MXKVStoreCreate(b"local", ctypes.byref(kv)) == 0, lib.MXGetLastError()
assert lib.MXKVStoreCreate(b"dist_sync", ctypes.byref(kv)) == -1
message = lib.MXGetLastError().decode()
print(message)
assert "libsymbind_mpi.so" in message and "cannot be loaded" in message, message
PY
  ;;
predict)
  python3 "$src/scripts/make_color_classifier.py" "$lib/libmxnet.so" "$tmp/colors"
  # shellcheck disable=SC2046
  cc -std=c99 -Wall -Werror "$src/tests/mxnet_client/predict_client.c" -o predict_client \
     $(pkg-config --cflags --libs mxnet) -pthread
  ./predict_client "$tmp/colors"
  ;;
mlp)
  epochs=$4 min_accuracy=$5
  g++ -std=c++11 "$src/tests/mxnet_client/mlp_fashion_mnist.cpp" -o mlp -I"$prefix/include" -L"$lib" -lmxnet
  LD_PRELOAD=$lib/libmxnet.so.0 ./mlp "$fashion" "$epochs" "$min_accuracy"
  ;;
*)
  echo "unknown mode '$mode' (headers, predict or mlp)"
  exit 2
  ;;
esac
