# libFuzzer targets (--enable-fuzzing).
