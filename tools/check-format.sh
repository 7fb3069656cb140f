#!/usr/bin/env bash
# Fails when a tracked C++ file is not clang-format clean (.clang-format at the root).
# Fix with: git ls-files '*.cpp' '*.hpp' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
bad=()
while IFS= read -r f; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu')
if [ ${#bad[@]} -ne 0 ]; then
  echo "check-format: ${#bad[@]} file(s) are not clang-format clean:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "fix with: git ls-files '*.cpp' '*.hpp' | xargs clang-format -i" >&2
  exit 1
fi
echo "check-format: $(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' | wc -l) files clean"
