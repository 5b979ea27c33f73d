# TM_CHECK_GTEST: the tests use Debian's GoogleTest (libgtest-dev).
# Without it the library and tools still build; `make check` then fails with
# a message that says what to install.
AC_DEFUN([TM_CHECK_GTEST], [
  PKG_CHECK_MODULES([GTEST], [gtest >= 1.10], [tm_have_gtest=yes], [tm_have_gtest=no])
  AM_CONDITIONAL([HAVE_GTEST], [test "x$tm_have_gtest" = xyes])
])
