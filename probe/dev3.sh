#!/bin/bash
REAL_OUT=${OUT:-/tmp/out}
OUT=/tmp/dev
mkdir -p $OUT/log
snap() { tar czf $REAL_OUT/dev.tgz -C $OUT log; }
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLADDER_FUZZ_ALL=ON > $OUT/log/configure.txt 2>&1
cmake --build build -j 16 --target ch16_wgmma fuzz-16-wgmma > $OUT/log/build.txt 2>&1; echo build rc $?
tail -2 $OUT/log/build.txt
build/bin/fuzz-16-wgmma --json $OUT/log/16.json > $OUT/log/fuzz-16-wgmma.txt 2>&1; echo fuzz rc $?
grep -h "scales\|problems,\|elements of" $OUT/log/fuzz-*.txt | head -30
snap
for v in 3xtf32-truncated 3xtf32; do
  build/bin/16-wgmma --variant $v --sizes 4096 8192 256x256x65536 --json $OUT/log/new16-$v.json > $OUT/log/new16-$v.txt 2>&1
done
snap
for f in $OUT/log/new16-*.txt; do echo == $f; grep -A3 "^[0-9]" $f | grep -v "wide inputs"; done
