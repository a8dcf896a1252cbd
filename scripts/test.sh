#!/usr/bin/env bash
# Build rtrack with warnings as errors and run the whole test suite (an empty suite fails).
# Usage: bash scripts/test.sh        (.ci/run runs exactly this)
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh" -DRTRACK_WERROR=ON
cd "$BUILD"
ctest --output-on-failure --no-tests=error
