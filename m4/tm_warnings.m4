# TM_SET_WARNINGS: warnings are errors for all project code.
AC_DEFUN([TM_SET_WARNINGS], [
  TM_WARN_CXXFLAGS="-Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual -Wformat=2 -Wimplicit-fallthrough -Wcast-align -Wmissing-declarations"
  TM_WARN_CFLAGS="-Wall -Wextra -Werror -Wshadow -Wformat=2 -Wimplicit-fallthrough -Wstrict-prototypes"
  AC_SUBST([TM_WARN_CXXFLAGS])
  AC_SUBST([TM_WARN_CFLAGS])
])
