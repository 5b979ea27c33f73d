# TM_CHECK_OPENSSL: libcrypto is required for the per-job secret (HMAC-SHA256)
# that authenticates links and the rendezvous store.
AC_DEFUN([TM_CHECK_OPENSSL], [
  PKG_CHECK_MODULES([CRYPTO], [libcrypto >= 1.1], [],
    [AC_MSG_ERROR([libcrypto (OpenSSL) not found: apt-get install libssl-dev])])
])
