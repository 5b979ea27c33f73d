# TM_ENABLE_SANITIZERS: --enable-sanitizers builds everything with ASan+UBSan,
# stopping at the first UBSan report so that `make check` fails on it.
AC_DEFUN([TM_ENABLE_SANITIZERS], [
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers], [build with AddressSanitizer and UndefinedBehaviorSanitizer])],
    [], [enable_sanitizers=no])
  tm_sanitizers=no
  AS_IF([test "x$enable_sanitizers" = xyes], [
    tm_sanitizers="address,undefined"
    # GCC 12 reports false maybe-uninitialized warnings in libstdc++ under
    # -fsanitize (std::function, std::regex); those are not errors here.
    SANITIZER_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -Wno-maybe-uninitialized"
    AC_SUBST([SANITIZER_FLAGS])
    AC_DEFINE([TM_SANITIZERS], [1], [built with ASan and UBSan])
  ])
  AM_CONDITIONAL([ENABLE_SANITIZERS], [test "x$enable_sanitizers" = xyes])
])
