#!/bin/sh
# Runs the C API test as 3 ranks of a local job.
exec "${TOP_BUILDDIR:-../..}/launcher/trainmover-launch" --nprocs 3 --timeout 60 -- ./api/c_api_test
