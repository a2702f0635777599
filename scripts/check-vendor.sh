#!/usr/bin/env bash
# Checks that vendor/actix-http is the crates.io release its PATCHES.md names plus exactly
# the change in vendor/actix-http/iris.patch, and nothing else: it downloads that release
# from crates.io, checks the archive against the registry index's checksum, applies the
# patch and compares the result with the vendored tree file by file. A copy that drifted
# (an edit not in the patch, a file added or lost, a different release) fails the check.
# It also prints a warning, without failing, when crates.io has a newer 3.x release
# (PATCHES.md says how to move to it).
# Needs curl, python3 and git (for `git apply`); crates.io must be reachable.
set -euo pipefail
cd "$(dirname "$0")/.."

VENDOR=vendor/actix-http
INDEX_URL=https://index.crates.io/ac/ti/actix-http
CRATE_URL=https://static.crates.io/crates/actix-http

# The release is named on PATCHES.md's first line: "# actix-http X.Y.Z, patched ...".
version="$(sed -n '1s/^# actix-http \([0-9][0-9.]*\),.*/\1/p' "$VENDOR/PATCHES.md")"
if [ -z "$version" ]; then
  echo "check-vendor: $VENDOR/PATCHES.md's first line does not name the release (# actix-http X.Y.Z, ...)" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

curl -fsS --retry 3 -o "$work/index" "$INDEX_URL" || {
  echo "check-vendor: cannot read the crates.io index ($INDEX_URL)" >&2
  exit 1
}
# One JSON object per release: the published archive's checksum, and every later 3.x
# release that is not yanked (pre-releases left out).
read -r cksum newer < <(python3 - "$version" "$work/index" <<'EOF'
import json, sys
wanted, path = sys.argv[1], sys.argv[2]
def key(v):
    return tuple(int(p) for p in v.split("."))
releases = [json.loads(line) for line in open(path) if line.strip()]
cksum = next((r["cksum"] for r in releases if r["vers"] == wanted), "-")
newer = [r["vers"] for r in releases
         if not r.get("yanked") and "-" not in r["vers"] and "+" not in r["vers"]
         and r["vers"].startswith("3.") and key(r["vers"]) > key(wanted)]
newer.sort(key=key)
print(cksum, newer[-1] if newer else "-")
EOF
)
if [ "$cksum" = "-" ]; then
  echo "check-vendor: crates.io has no actix-http $version (named in $VENDOR/PATCHES.md)" >&2
  exit 1
fi

curl -fsS --retry 3 -o "$work/release.crate" "$CRATE_URL/actix-http-$version.crate" || {
  echo "check-vendor: cannot download actix-http $version from crates.io" >&2
  exit 1
}
if [ "$(sha256sum "$work/release.crate" | cut -d' ' -f1)" != "$cksum" ]; then
  echo "check-vendor: the downloaded actix-http $version does not match the index's checksum" >&2
  exit 1
fi
tar -xzf "$work/release.crate" -C "$work"
expected="$work/actix-http-$version"

# `git apply` refuses a patch that does not apply exactly (no fuzz, no offset guessing
# beyond what the context proves).
if ! (cd "$expected" && git apply --whitespace=nowarn "$OLDPWD/$VENDOR/iris.patch"); then
  echo "check-vendor: $VENDOR/iris.patch does not apply to actix-http $version" >&2
  exit 1
fi
cp "$VENDOR/PATCHES.md" "$VENDOR/iris.patch" "$expected/"

# Compare against what git tracks (the tree that builds), not stray local files.
actual="$work/vendored"
mkdir -p "$actual"
git ls-files -z -- "$VENDOR" | while IFS= read -r -d '' file; do
  mkdir -p "$actual/$(dirname "${file#"$VENDOR"/}")"
  cp "$file" "$actual/${file#"$VENDOR"/}"
done
if ! diff -r "$expected" "$actual" >"$work/drift"; then
  echo "check-vendor: $VENDOR is not actix-http $version plus exactly $VENDOR/iris.patch:" >&2
  sed -e "s|$expected|crates.io+iris.patch|g" -e "s|$actual|$VENDOR|g" "$work/drift" >&2
  exit 1
fi
echo "check-vendor: $VENDOR is actix-http $version from crates.io plus iris.patch" >&2

if [ "$newer" != "-" ]; then
  echo "warning: crates.io has actix-http $newer; $VENDOR is $version (to update: $VENDOR/PATCHES.md)" >&2
fi
