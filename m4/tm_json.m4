# TM_CHECK_NLOHMANN_JSON: nlohmann-json (header-only), through which every
# JSON the tools write or read goes. Required.
AC_DEFUN([TM_CHECK_NLOHMANN_JSON], [
  AC_LANG_PUSH([C++])
  AC_CHECK_HEADER([nlohmann/json.hpp], [],
    [AC_MSG_ERROR([nlohmann/json.hpp not found: install nlohmann-json3-dev (Debian) and re-run configure])])
  AC_LANG_POP([C++])
])
