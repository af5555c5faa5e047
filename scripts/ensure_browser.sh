#!/usr/bin/env bash
# The browser the chat page's tests drive (tests/test_chat_page.py): Debian's chromium and
# chromium-driver. Installs them when missing and this shell may (root with apt-get); says
# what to run otherwise. Idempotent: with both present it changes nothing.
# Used by .ci/run (CI runs as root, so the tests never lack it there) and by `make test`.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "ensure_browser: installing chromium and chromium-driver (apt-get)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q chromium chromium-driver >/dev/null
    exit 0
fi
echo "ensure_browser: chromium and chromium-driver are missing; as root: apt-get install" \
    "chromium chromium-driver (the browser tests are skipped until then, outside CI)" >&2
# In CI a missing browser must fail the run, not skip its tests.
if [ -n "${CI:-}" ]; then
    exit 1
fi
