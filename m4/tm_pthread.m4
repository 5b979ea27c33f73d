# TM_CHECK_PTHREAD: threads are required (the progress engine is a thread).
AC_DEFUN([TM_CHECK_PTHREAD], [
  AX_PTHREAD([], [AC_MSG_ERROR([POSIX threads are required])])
  AC_SUBST([PTHREAD_CFLAGS])
  AC_SUBST([PTHREAD_LIBS])
])
