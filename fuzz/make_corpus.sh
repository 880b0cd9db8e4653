#!/bin/sh
# Builds the seed corpora for the fuzz targets in DIR (default ./corpus) from the shared model
# files (../shared/models next to the repository) plus a few hand-made inputs. Files are
# copied at run time into the build directory; nothing from ../shared is committed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
shared=${SYMBIND_SHARED_DIR:-$here/../../shared}
out=${1:-corpus}
mkdir -p "$out/params" "$out/json" "$out/param" "$out/symbind"
cp -f "$shared"/models/mtcnn/*.params "$out/params/"
cp -f "$shared"/models/mtcnn/*-symbol.json "$shared"/models/symbols/*.json "$out/json/"
chmod -R u+w "$out"
# Small .params seeds of every layout: V2 dense, V3 scalar, V1, row_sparse, none.
printf '\022\001\0\0\0\0\0\0\0\0\0\0\0\0\0\0\001\0\0\0\0\0\0\0\311\372\223\371\0\0\0\0\001\0\0\0\002\0\0\0\0\0\0\0\001\0\0\0\0\0\0\0\0\0\0\0\0\0\200\077\0\0\0\100\001\0\0\0\0\0\0\0\001\0\0\0\0\0\0\0w' > "$out/params/v2.params"
printf '\022\001\0\0\0\0\0\0\0\0\0\0\0\0\0\0\001\0\0\0\0\0\0\0\312\372\223\371\0\0\0\0\0\0\0\0\001\0\0\0\0\0\0\0\006\0\0\0\005\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' > "$out/params/v3.params"
printf '\022\001\0\0\0\0\0\0\0\0\0\0\0\0\0\0\001\0\0\0\0\0\0\0\310\372\223\371\001\0\0\0\002\0\0\0\0\0\0\0\002\0\0\0\0\0\0\0\004\0\0\0\001\0\0\0\002\0\0\0\0\0\0\0\0\0\0\0' > "$out/params/v1.params"
printf '\022\001\0\0\0\0\0\0\0\0\0\0\0\0\0\0\001\0\0\0\0\0\0\0\311\372\223\371\001\0\0\0\002\0\0\0\001\0\0\0\0\0\0\0\001\0\0\0\0\0\0\0\002\0\0\0\003\0\0\0\0\0\0\0\001\0\0\0\0\0\0\0\001\0\0\0\0\0\0\0\0\0\0\0\006\0\0\0\001\0\0\0\001\0\0\0\0\0\0\0\0\0\200\077\002\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' > "$out/params/rsp.params"
# Parameter seeds: first byte picks the op.
i=0
for kv in 'num_hidden=10' 'kernel=(3,3)
num_filter=8
pad=(1,1)' 'act_type=relu' 'pool_type=max
kernel=(2,2)
stride=(2,2)' 'eps=0.001
fix_gamma=False' 'num_args=2
dim=1' 'p=0.5' 'shape=(2,-1,0)'; do
  for op in 0 7 19 31 43 59; do
    { printf "\\$(printf %03o $op)"; printf '%s' "$kv"; } > "$out/param/seed$i"
    i=$((i + 1))
  done
done
# .symbind seeds are the committed fuzz/regression/model_file/ files (among them a valid model
# whose file stores a prepacked form: symbind convert --prepack of a one-Convolution net).
echo "corpus in $out: $(ls "$out/params" | wc -l) params, $(ls "$out/json" | wc -l) json, $(ls "$out/param" | wc -l) param seeds"
