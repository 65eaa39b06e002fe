#!/usr/bin/env bash
# Usage: tools/node-from-npm.sh MAJOR DIR
#
# Installs the latest Node.js MAJOR release into DIR/node-MAJOR and prints its
# bin directory (nothing else goes to stdout). The binary comes from the npm
# registry: the node-linux-<arch> package that the `node` package installs,
# taken directly, so no install script runs and nothing is downloaded from
# nodejs.org. The package also ships Node's headers: point npm_config_nodedir
# at the bin directory's parent and native addons compile for this Node's ABI.
set -euo pipefail
if [ "$#" -ne 2 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 MAJOR DIR" >&2
  exit 2
fi
major="$1"
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) echo "no Node.js package for $(uname -m)" >&2; exit 1 ;;
esac
prefix="$2/node-$major"
npm install --no-save --no-audit --no-fund --no-package-lock --prefix "$prefix" "node-linux-$arch@$major" >&2
bin="$prefix/node_modules/node-linux-$arch/bin"
"$bin/node" --version >&2
echo "$bin"
