#!/bin/sh
# Runs the C test of tm_config_t's compatibility as the one rank of a local job.
exec "${TOP_BUILDDIR:-../..}/launcher/trainmover-launch" --nprocs 1 --timeout 60 -- ./api/c_config_abi_test
