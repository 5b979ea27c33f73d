# TM_ENABLE_FUZZERS: libFuzzer targets for the wire parsers. They need clang++
# with libFuzzer (Debian: clang, libclang-rt-14-dev); default: on when found.
AC_DEFUN([TM_ENABLE_FUZZERS], [
  AC_ARG_ENABLE([fuzzers],
    [AS_HELP_STRING([--disable-fuzzers], [do not build the libFuzzer targets (needs clang++)])],
    [], [enable_fuzzers=check])
  tm_fuzzers=no
  AS_IF([test "x$enable_fuzzers" != xno], [
    AC_PATH_PROGS([FUZZ_CXX], [clang++ clang++-14], [no])
    AS_IF([test "x$FUZZ_CXX" != xno], [
      AC_MSG_CHECKING([whether $FUZZ_CXX links -fsanitize=fuzzer])
      echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' > conftest-fuzz.cc
      AS_IF([$FUZZ_CXX -std=c++20 -fsanitize=fuzzer conftest-fuzz.cc -o conftest-fuzz >&AS_MESSAGE_LOG_FD 2>&1],
        [tm_fuzzers=yes], [tm_fuzzers=no])
      rm -f conftest-fuzz.cc conftest-fuzz
      AC_MSG_RESULT([$tm_fuzzers])
    ])
    AS_IF([test "x$enable_fuzzers" = xyes && test "x$tm_fuzzers" = xno],
      [AC_MSG_ERROR([--enable-fuzzers given but clang++ -fsanitize=fuzzer does not work])])
  ])
  AM_CONDITIONAL([ENABLE_FUZZERS], [test "x$tm_fuzzers" = xyes])
])
