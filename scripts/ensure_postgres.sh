#!/usr/bin/env bash
# The PostgreSQL server the durable crash tests (tests/test_durable_crash.py) and
# `python -m benchmarks.durable_steps` start privately (benchmarks/_postgres.py: initdb in a
# temporary directory, on loopback): Debian's postgresql package. Installs it when missing
# and this shell may (root with apt-get); says what to run otherwise. Idempotent: with the
# server programs present it changes nothing. Used by `make test` (and so by .ci/run).
set -euo pipefail
if command -v pg_config >/dev/null && [ -x "$(pg_config --bindir)/initdb" ]; then
    exit 0
fi
if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "ensure_postgres: installing postgresql (apt-get)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q postgresql >/dev/null
    exit 0
fi
echo "ensure_postgres: the PostgreSQL server is missing; as root: apt-get install postgresql" \
    "(the Postgres crash tests are skipped until then, outside CI)" >&2
# In CI a missing server must fail the run, not skip its tests.
if [ -n "${CI:-}" ]; then
    exit 1
fi
