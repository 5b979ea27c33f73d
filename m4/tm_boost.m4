# TM_CHECK_BOOST_PROGRAM_OPTIONS: every command line (trainmover-launch and the
# tools) is parsed by Boost.Program_options (Debian libboost-program-options-dev).
# It is required: without it there is no launcher.
AC_DEFUN([TM_CHECK_BOOST_PROGRAM_OPTIONS], [
  AC_LANG_PUSH([C++])
  tm_save_LIBS=$LIBS
  LIBS="-lboost_program_options $LIBS"
  AC_CACHE_CHECK([for Boost.Program_options], [tm_cv_boost_program_options], [
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <boost/program_options.hpp>]],
      [[boost::program_options::options_description d("options");
        d.add_options()("help", "help");
        return d.options().size() == 1 ? 0 : 1;]])],
      [tm_cv_boost_program_options=yes], [tm_cv_boost_program_options=no])
  ])
  LIBS=$tm_save_LIBS
  AC_LANG_POP([C++])
  AS_IF([test "x$tm_cv_boost_program_options" != xyes],
    [AC_MSG_ERROR([Boost.Program_options not found (apt-get install libboost-program-options-dev)])])
  AC_SUBST([BOOST_PROGRAM_OPTIONS_LIBS], [-lboost_program_options])
])
