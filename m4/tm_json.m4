# TM_CHECK_NLOHMANN_JSON: the header-only JSON library (Debian
# nlohmann-json3-dev) that the control protocol and the event log use.
AC_DEFUN([TM_CHECK_NLOHMANN_JSON], [
  AC_CHECK_HEADER([nlohmann/json.hpp], [],
    [AC_MSG_ERROR([nlohmann/json.hpp not found (apt-get install nlohmann-json3-dev)])])
])
