#!/bin/sh
# The commits since BASE each have a subject of at most 72 characters
# (scripts/hooks/commit-msg checks each as it is made). .ci/run runs this.
base=${1:?usage: check-commits.sh BASE}
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  echo "check-commits: $base is not in this clone; subjects not checked" >&2
  exit 0
fi
long=$(git log --format=%s "$base..HEAD" | awk 'length > 72')
if [ -n "$long" ]; then
  echo "check-commits: subjects over 72 characters since $base:" >&2
  printf '%s\n' "$long" >&2
  exit 1
fi
