# TM_CHECK_SLURM: optional Slurm development headers (the SPANK plugin).
AC_DEFUN([TM_CHECK_SLURM], [
  AC_ARG_WITH([slurm], [AS_HELP_STRING([--without-slurm], [do not build the SPANK plugin])], [], [with_slurm=check])
  tm_have_slurm=no
  tm_slurm_detail=
  AS_IF([test "x$with_slurm" != xno], [
    AC_CHECK_HEADER([slurm/spank.h], [tm_have_slurm=yes], [], [])
    AS_IF([test "x$tm_have_slurm" = xyes], [
      AC_COMPUTE_INT([tm_slurm_version], [SLURM_VERSION_NUMBER], [#include <slurm/slurm_version.h>], [tm_slurm_version=0])
      tm_slurm_detail="(version $(( tm_slurm_version >> 16 )).$(( (tm_slurm_version >> 8) & 255 )))"
      AC_DEFINE([HAVE_SLURM], [1], [Slurm SPANK headers are available])
    ], [
      AS_IF([test "x$with_slurm" = xyes], [AC_MSG_ERROR([--with-slurm given but slurm/spank.h not found (apt-get install libslurm-dev)])])
    ])
  ])
  AM_CONDITIONAL([HAVE_SLURM], [test "x$tm_have_slurm" = xyes])
])
