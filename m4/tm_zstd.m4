# TM_CHECK_ZSTD: optional libzstd, used to compress collective traces
# (lib/record). Without it traces are written uncompressed, and asking for
# compression, or reading a compressed trace, is a clear error.
AC_DEFUN([TM_CHECK_ZSTD], [
  AC_ARG_WITH([zstd], [AS_HELP_STRING([--without-zstd], [do not compress traces with zstd])], [], [with_zstd=check])
  tm_have_zstd=no
  AS_IF([test "x$with_zstd" != xno], [
    PKG_CHECK_MODULES([ZSTD], [libzstd >= 1.4], [tm_have_zstd=yes], [tm_have_zstd=no])
    AS_IF([test "x$with_zstd" = xyes && test "x$tm_have_zstd" = xno],
      [AC_MSG_ERROR([--with-zstd given but libzstd not found (apt-get install libzstd-dev)])])
  ])
  AS_IF([test "x$tm_have_zstd" = xyes], [AC_DEFINE([HAVE_ZSTD], [1], [libzstd is available])])
  AM_CONDITIONAL([HAVE_ZSTD], [test "x$tm_have_zstd" = xyes])
])
