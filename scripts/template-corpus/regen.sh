#!/usr/bin/env bash
# Rewrites spec/fixtures/templates/expected.json from cases.json with Go's text/template.
# Needs Go (Debian's golang-go, 1.19); CI does not run this, it only compares against the output.
set -euo pipefail
cd "$(dirname "$0")/../.."
cases=spec/fixtures/templates/cases.json
node scripts/template-corpus/build-cases.mjs > "$cases"
GO111MODULE=off go run scripts/template-corpus/main.go "$cases" spec/fixtures/templates/expected.json
