# TM_CHECK_PMIX: optional PMIx client library (rendezvous under Slurm).
AC_DEFUN([TM_CHECK_PMIX], [
  AC_ARG_WITH([pmix], [AS_HELP_STRING([--without-pmix], [do not use PMIx])], [], [with_pmix=check])
  tm_have_pmix=no
  tm_pmix_detail=
  AS_IF([test "x$with_pmix" != xno], [
    PKG_CHECK_MODULES([PMIX], [pmix >= 3], [tm_have_pmix=yes
      tm_pmix_detail="($($PKG_CONFIG --modversion pmix))"], [
      AS_IF([test "x$with_pmix" = xyes], [AC_MSG_ERROR([--with-pmix given but pkg-config pmix failed])])
    ])
  ])
  AS_IF([test "x$tm_have_pmix" = xyes], [AC_DEFINE([HAVE_PMIX], [1], [PMIx is available])])
  AM_CONDITIONAL([HAVE_PMIX], [test "x$tm_have_pmix" = xyes])
])
