#!/bin/sh
# Runs the C API switch test as 5 processes of a local job (4 slots + 1 standby).
exec "${TOP_BUILDDIR:-../..}/launcher/trainmover-launch" --nprocs 5 --timeout 60 -- ./api/c_switch_test
