# TM_CHECK_CUDA_NCCL: optional CUDA toolkit + NCCL (GPU path, NCCL interposer).
# --with-cuda=DIR picks the toolkit; default /usr/local/cuda.
AC_DEFUN([TM_CHECK_CUDA_NCCL], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda=DIR], [CUDA toolkit with NCCL (default: /usr/local/cuda); --without-cuda turns it off])],
    [], [with_cuda=check])
  tm_have_cuda_nccl=no
  tm_cuda_nccl_detail=
  AS_IF([test "x$with_cuda" != xno], [
    tm_cuda_dir=$with_cuda
    AS_IF([test "x$tm_cuda_dir" = xcheck || test "x$tm_cuda_dir" = xyes], [tm_cuda_dir=/usr/local/cuda])
    tm_save_CPPFLAGS=$CPPFLAGS
    tm_save_LIBS=$LIBS
    tm_save_LDFLAGS=$LDFLAGS
    CPPFLAGS="$CPPFLAGS -I$tm_cuda_dir/include"
    LDFLAGS="$LDFLAGS -L$tm_cuda_dir/lib64 -L$tm_cuda_dir/lib"
    AC_CHECK_HEADERS([cuda_runtime_api.h nccl.h], [], [tm_cuda_missing=yes])
    AS_IF([test "x$tm_cuda_missing" != xyes], [
      AC_CHECK_LIB([cudart], [cudaGetDeviceCount],
        [AC_CHECK_LIB([nccl], [ncclGetVersion], [tm_have_cuda_nccl=yes], [], [-lcudart])])
    ])
    # Functions that only some NCCL 2.x headers declare (HAVE_DECL_NCCL*):
    # the interposer defines those this build's nccl.h has.
    AS_IF([test "x$tm_have_cuda_nccl" = xyes], [
      AC_CHECK_DECLS([ncclMemAlloc, ncclMemFree, ncclGetLastError, ncclCommRegister, ncclCommDeregister, ncclCommShrink, ncclCommRevoke, ncclCommInitRankScalable, ncclCommWindowRegister, ncclCommWindowDeregister, ncclAlltoAll, ncclGather, ncclScatter, ncclGroupSimulateEnd], [], [],
        [[#include <nccl.h>]])
    ])
    CPPFLAGS=$tm_save_CPPFLAGS
    LIBS=$tm_save_LIBS
    LDFLAGS=$tm_save_LDFLAGS
    AS_IF([test "x$tm_have_cuda_nccl" = xyes], [
      tm_cuda_nccl_detail="($tm_cuda_dir)"
      AC_SUBST([CUDA_CPPFLAGS], ["-I$tm_cuda_dir/include"])
      AC_SUBST([CUDA_LDFLAGS], ["-L$tm_cuda_dir/lib64 -L$tm_cuda_dir/lib -Wl,-rpath,$tm_cuda_dir/lib64 -Wl,-rpath,$tm_cuda_dir/lib"])
      AC_SUBST([CUDA_LIBS], ["-lcudart"])
      AC_SUBST([NCCL_LIBS], ["-lnccl"])
      AC_DEFINE([HAVE_CUDA_NCCL], [1], [CUDA runtime and NCCL are available])
    ], [
      AS_IF([test "x$with_cuda" != xcheck],
        [AC_MSG_ERROR([--with-cuda given but CUDA runtime/NCCL not usable in $tm_cuda_dir])])
    ])
  ])
  AM_CONDITIONAL([HAVE_CUDA_NCCL], [test "x$tm_have_cuda_nccl" = xyes])
])
