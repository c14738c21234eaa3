#!/bin/sh
# A consumer of the installed clprim through pkg-config alone (see
# tests/CMakeLists.txt): compiles consumer.c with nothing but what
# `pkg-config clprim` gives (no -I or -L of our own), then runs it.
#   pkgconfig.sh CC PREFIX LIBDIR SOURCE WORKDIR shared|static
# shared: the prefix as installed, `pkg-config --cflags --libs clprim`;
#         the program finds libclprim.so through LD_LIBRARY_PATH at run time.
# static: a copy of the prefix without the shared library (the package
#         moved elsewhere: clprim.pc must be relocatable), linked with
#         `pkg-config --static --cflags --libs clprim` (libclprim.a and what
#         it needs).
# mpi:    the prefix as installed, `pkg-config --cflags --libs clprim-mpi`
#         (the MPI library's consumer: SOURCE is consumer_mpi.c).
# $CONSUMER_CFLAGS (sanitizer flags of a sanitized build) is added. The
# source is also compiled with its own -DCL_TARGET_OPENCL_VERSION=200 and
# -Werror: the package's flags must not choose the version.
set -eu
cc=$1 prefix=$2 libdir=$3 source=$4 work=$5 mode=$6

rm -rf "$work"
mkdir -p "$work"
if [ "$mode" = static ]; then
  cp -R "$prefix" "$work/prefix"
  prefix=$work/prefix
  rm -f "$prefix/$libdir"/libclprim.so*
  static=--static
else
  static=
fi
PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
export PKG_CONFIG_PATH
package=clprim
[ "$mode" = mpi ] && package=clprim-mpi
flags=$(pkg-config $static --cflags --libs $package)
echo "pkg-config $static --cflags --libs $package: $flags"
# shellcheck disable=SC2086 # the flags are words
"$cc" ${CONSUMER_CFLAGS:-} -o "$work/consumer" "$source" $flags
# The flags leave the OpenCL version to the consumer: one that chooses 2.0
# compiles without a redefinition warning.
if [ "$mode" != mpi ]; then
  # shellcheck disable=SC2086
  "$cc" ${CONSUMER_CFLAGS:-} -DCL_TARGET_OPENCL_VERSION=200 -Werror -c -o "$work/consumer-cl200.o" \
    "$source" $(pkg-config $static --cflags $package)
fi
if [ "$mode" = static ]; then
  if readelf -d "$work/consumer" | grep -q 'NEEDED.*libclprim'; then
    echo "the static consumer needs libclprim.so" >&2
    exit 1
  fi
  "$work/consumer"
else
  LD_LIBRARY_PATH=$(pkg-config --variable=libdir clprim)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    "$work/consumer"
fi
