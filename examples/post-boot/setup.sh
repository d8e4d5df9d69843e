#!/usr/bin/env bash
# Post-boot step: runs once the instance is up (and again only when this file or the instance changes).
set -euo pipefail
mkdir -p data
echo "dataset ready for ${RUN_NAME:-run}" > data/READY
python3 --version 2>/dev/null || echo "no python3 on this image"
echo "setup done on $(uname -s)"
