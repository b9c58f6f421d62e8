#!/bin/bash
REAL_OUT=${OUT:-/tmp/out}
OUT=/tmp/dev
mkdir -p $OUT/log
snap() { tar czf $REAL_OUT/dev.tgz -C $OUT log; }
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLADDER_FUZZ_ALL=ON > $OUT/log/configure.txt 2>&1
cmake --build build -j 16 --target ch14_tf32 ch15_3xtf32 ch16_wgmma fuzz-14-tf32 fuzz-15-3xtf32 fuzz-16-wgmma fuzz-13-tail > $OUT/log/build.txt 2>&1; echo build rc $?
tail -2 $OUT/log/build.txt
for c in 15-3xtf32 16-wgmma 14-tf32 13-tail; do build/bin/fuzz-$c --json $OUT/log/$c.json > $OUT/log/fuzz-$c.txt 2>&1 & done; wait
grep -h "scales\|FAIL\|problems" $OUT/log/fuzz-*.txt
snap
S="2048 4096 8192 256x256x65536"
for v in 3xtf32 3xtf32-truncated 3xtf32-rounded default truncated; do
  build/bin/16-wgmma --variant $v --sizes $S 1024 --json $OUT/log/new16-$v.json > $OUT/log/new16-$v.txt 2>&1
done
snap
for f in $OUT/log/new16-*.txt; do echo == $f; grep -A3 "^[0-9]" $f | grep -v "wide inputs"; done
