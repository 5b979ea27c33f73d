# TM_CHECK_BOOST_PROGRAM_OPTIONS: command lines go through Boost.Program_options
# (Debian libboost-program-options-dev). Required: configure stops naming the
# package when it is missing.
AC_DEFUN([TM_CHECK_BOOST_PROGRAM_OPTIONS], [
  AC_LANG_PUSH([C++])
  tm_save_LIBS=$LIBS
  LIBS="-lboost_program_options $LIBS"
  AC_MSG_CHECKING([for Boost.Program_options])
  AC_LINK_IFELSE(
    [AC_LANG_PROGRAM([[#include <boost/program_options.hpp>]],
                     [[boost::program_options::options_description d("x");
                       d.add_options()("a", "b");]])],
    [tm_have_boost_po=yes], [tm_have_boost_po=no])
  LIBS=$tm_save_LIBS
  AC_MSG_RESULT([$tm_have_boost_po])
  AC_LANG_POP([C++])
  AS_IF([test "x$tm_have_boost_po" != xyes],
        [AC_MSG_ERROR([Boost.Program_options not found: install libboost-program-options-dev])])
  AC_SUBST([BOOST_PROGRAM_OPTIONS_LIBS], [-lboost_program_options])
])
