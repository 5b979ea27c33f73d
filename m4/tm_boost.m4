# TM_CHECK_BOOST_PROGRAM_OPTIONS: Boost.Program_options, the command-line
# parser of the tools (Debian libboost-program-options-dev). Sets
# BOOST_PROGRAM_OPTIONS_LIBS.
AC_DEFUN([TM_CHECK_BOOST_PROGRAM_OPTIONS], [
  AC_CHECK_HEADER([boost/program_options.hpp], [],
    [AC_MSG_ERROR([boost/program_options.hpp not found (apt-get install libboost-program-options-dev)])])
  AC_MSG_CHECKING([for -lboost_program_options])
  tm_save_LIBS=$LIBS
  LIBS="-lboost_program_options $LIBS"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <boost/program_options.hpp>]],
      [[boost::program_options::options_description d("x"); return d.options().size();]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([cannot link -lboost_program_options (apt-get install libboost-program-options-dev)])])
  LIBS=$tm_save_LIBS
  BOOST_PROGRAM_OPTIONS_LIBS=-lboost_program_options
  AC_SUBST([BOOST_PROGRAM_OPTIONS_LIBS])
])
