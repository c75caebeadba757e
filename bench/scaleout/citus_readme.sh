#!/bin/bash
# bench/scaleout/citus_readme.sh -- run the SQL blocks of README's Citus
# section as written, top to bottom, with psql -e on the coordinator of a
# new cluster of citus_cluster.sh (nodes not yet added, no tables).  The
# only error expected is docs_add()'s refusal of the near-copy (23P01).
#
# Run as a non-root user with PG_CONFIG naming the installation's pg_config.
set -euo pipefail
: "${PG_CONFIG:=pg_config}"
readme=$(dirname "$0")/../../README.md
python3 - "$readme" <<'PY' | "$("$PG_CONFIG" --bindir)/psql" -X -h 127.0.0.1 -p 26000 -U postgres -e
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
section = text[text.index("### Citus\n"):text.index("## Performance\n")]
print("\\set ON_ERROR_STOP off")
print("\n".join(re.findall(r"```sql\n(.*?)```", section, re.S)))
PY
