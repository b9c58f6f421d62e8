#!/bin/bash
# Dev run: build everything with every fuzz program, run the fuzzers, time old against new.
set -x
REAL_OUT=${OUT:-/tmp/out}
OUT=/tmp/dev
mkdir -p $OUT/log
snap() { tar czf $REAL_OUT/dev.tgz -C $OUT log; }
nproc
(cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLADDER_FUZZ_ALL=ON > $OUT/log/configure.txt 2>&1 && cmake --build build -j 16 > $OUT/log/build.txt 2>&1; echo build rc $?) &
NV="nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I ../../code/include -lcublas"
(cd probe/old && $NV chapters/16-wgmma/kernel.cu -o old16 > $OUT/log/old16.txt 2>&1; $NV chapters/15-3xtf32/kernel.cu -o old15 > $OUT/log/old15.txt 2>&1; echo old rc $?) &
wait
tail -3 $OUT/log/build.txt; snap
ls probe/old
# Fuzz every chapter, 4 at a time.
cd build && ctest -R "fuzz" -j 4 -V > $OUT/log/fuzz.txt 2>&1; echo fuzz rc $?; cd ..
grep -h "scales\|FAIL\|problems" $OUT/log/fuzz.txt | head -80
cp build/fuzz/*.json $OUT/log/ 2>/dev/null
snap
# Timing: old against new.
S="2048 4096 8192 256x256x65536"
for v in 3xtf32 3xtf32-truncated; do
  probe/old/old16 --variant $v --sizes $S --json $OUT/log/old16-$v.json > $OUT/log/old16-$v.txt 2>&1
  build/bin/16-wgmma --variant $v --sizes $S --json $OUT/log/new16-$v.json > $OUT/log/new16-$v.txt 2>&1
done
for v in default rounded; do
  build/bin/16-wgmma --variant $v --sizes $S 1000 6000 --json $OUT/log/new16-$v.json > $OUT/log/new16-$v.txt 2>&1
done
probe/old/old15 --sizes 2048 4096 8192 --json $OUT/log/old15.json > $OUT/log/old15.txt 2>&1
build/bin/15-3xtf32 --sizes 2048 4096 8192 --json $OUT/log/new15.json > $OUT/log/new15.txt 2>&1
snap
tail -n 12 $OUT/log/*16-*.txt $OUT/log/*15.txt
