# TM_CHECK_GLOO / TM_CHECK_MPI: the peers trainmover-bench measures against in
# the same run. Both are optional; the benchmark skips a peer that is absent.
AC_DEFUN([TM_CHECK_GLOO], [
  AC_ARG_WITH([gloo], [AS_HELP_STRING([--without-gloo], [do not build the gloo baseline])], [], [with_gloo=check])
  tm_have_gloo=no
  AS_IF([test "x$with_gloo" != xno], [
    tm_save_LIBS=$LIBS
    LIBS="$LIBS -lgloo"
    AC_MSG_CHECKING([for gloo (libgloo-dev)])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <gloo/transport/tcp/device.h>]],
        [[gloo::transport::tcp::attr a; return gloo::transport::tcp::CreateDevice(a) ? 0 : 1;]])],
      [tm_have_gloo=yes], [tm_have_gloo=no])
    AC_MSG_RESULT([$tm_have_gloo])
    LIBS=$tm_save_LIBS
  ])
  AS_IF([test "x$tm_have_gloo" = xyes], [
    AC_DEFINE([HAVE_GLOO], [1], [gloo is available for the baseline])
    AC_SUBST([GLOO_LIBS], [-lgloo])
  ])
  AM_CONDITIONAL([HAVE_GLOO], [test "x$tm_have_gloo" = xyes])
])

AC_DEFUN([TM_CHECK_MPI], [
  AC_ARG_WITH([mpi], [AS_HELP_STRING([--without-mpi], [do not build the OpenMPI baseline])], [], [with_mpi=check])
  tm_have_mpi=no
  tm_mpi_detail=
  AS_IF([test "x$with_mpi" != xno], [
    PKG_CHECK_MODULES([MPI], [ompi-c], [
      AC_PATH_PROG([MPIRUN], [mpirun], [no])
      AS_IF([test "x$MPIRUN" != xno], [tm_have_mpi=yes
        tm_mpi_detail="($($PKG_CONFIG --modversion ompi-c), $MPIRUN)"])
    ], [:])
  ])
  AS_IF([test "x$tm_have_mpi" = xyes], [
    AC_DEFINE([HAVE_MPI], [1], [OpenMPI is available for the baseline])
    AC_DEFINE_UNQUOTED([TM_MPIRUN], ["$MPIRUN"], [mpirun used by trainmover-bench])
  ])
  AM_CONDITIONAL([HAVE_MPI], [test "x$tm_have_mpi" = xyes])
])
