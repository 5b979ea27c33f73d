# TM_CHECK_IBVERBS: optional libibverbs (RDMA transport).
AC_DEFUN([TM_CHECK_IBVERBS], [
  AC_ARG_WITH([verbs], [AS_HELP_STRING([--without-verbs], [do not build the ibverbs transport])], [], [with_verbs=check])
  tm_have_ibverbs=no
  AS_IF([test "x$with_verbs" != xno], [
    AC_CHECK_HEADER([infiniband/verbs.h],
      [AC_CHECK_LIB([ibverbs], [ibv_get_device_list], [tm_have_ibverbs=yes])])
    AS_IF([test "x$with_verbs" = xyes && test "x$tm_have_ibverbs" = xno],
      [AC_MSG_ERROR([--with-verbs given but libibverbs not found (apt-get install libibverbs-dev)])])
  ])
  AS_IF([test "x$tm_have_ibverbs" = xyes], [
    AC_DEFINE([HAVE_IBVERBS], [1], [libibverbs is available])
    AC_SUBST([IBVERBS_LIBS], [-libverbs])
  ])
  AM_CONDITIONAL([HAVE_IBVERBS], [test "x$tm_have_ibverbs" = xyes])
])
