#!/usr/bin/env bash
# Headless Chromium and its WebDriver from Debian, for tests/test_review_browser.py.
# Called by .ci/run before the tests; does nothing when both are already installed.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium chromium-driver
