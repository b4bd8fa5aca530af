#!/bin/sh
# Install the weir binary on Linux or macOS:
#
#   curl -fsSL https://github.com/weir-mcp/weir/releases/latest/download/install.sh | sh
#
# Downloads weir-<target>.tar.gz and SHA256SUMS from a weir release, refuses the archive unless
# its SHA-256 matches the line SHA256SUMS gives for it, and puts `weir` in the install directory
# (replacing an older one in one step). Nothing is written outside that directory and a
# temporary one that is removed on exit.
#
# Settings (environment variables):
#   WEIR_VERSION       the version to install, e.g. 0.2.0 (default: the latest release)
#   WEIR_INSTALL_DIR   where to put weir (default: $HOME/.local/bin)
#   WEIR_RELEASES_URL  where releases are downloaded from, for a mirror
#                      (default: https://github.com/weir-mcp/weir/releases; the script fetches
#                      $WEIR_RELEASES_URL/latest/download/<file> or .../download/v<version>/<file>)
#
# Exit codes: 0 installed, 1 anything failed (the message says what; nothing was installed).
# Windows: download weir-x86_64-pc-windows-msvc.zip from the release page instead.
set -eu

releases="${WEIR_RELEASES_URL:-https://github.com/weir-mcp/weir/releases}"
releases="${releases%/}"
version="${WEIR_VERSION:-latest}"
version="${version#v}"
install_dir="${WEIR_INSTALL_DIR:-${HOME:?HOME is not set; set WEIR_INSTALL_DIR}/.local/bin}"

fail() {
  printf 'weir install: %s\n' "$1" >&2
  exit 1
}

case "$(uname -s)" in
  Linux) os=unknown-linux-gnu ;;
  Darwin) os=apple-darwin ;;
  *) fail "no binary for $(uname -s) here; on Windows download weir-x86_64-pc-windows-msvc.zip from $releases, elsewhere run weir from JSR: deno run -A jsr:@weir/weir/cli" ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=x86_64 ;;
  aarch64 | arm64) arch=aarch64 ;;
  *) fail "no binary for the $(uname -m) processor; run weir from JSR instead: deno run -A jsr:@weir/weir/cli" ;;
esac
if [ "$os" = unknown-linux-gnu ] && (ldd --version 2>&1 || true) | grep -qi musl; then
  fail "weir's Linux binaries need glibc and this system uses musl (e.g. Alpine); use the image ghcr.io/weir-mcp/weir or run weir from JSR: deno run -A jsr:@weir/weir/cli"
fi
target="$arch-$os"
archive="weir-$target.tar.gz"

if [ "$version" = latest ]; then
  base="$releases/latest/download"
else
  base="$releases/download/v$version"
fi

# HTTPS only (redirects included), unless WEIR_RELEASES_URL itself names a plain-HTTP mirror.
proto='=https'
case "$releases" in http://*) proto='=http,https' ;; esac
if command -v curl >/dev/null 2>&1; then
  fetch() { curl -fsSL --proto "$proto" --proto-redir "$proto" -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget -q -O "$2" "$1"; }
else
  fail "needs curl or wget to download the release"
fi
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
else
  fail "needs sha256sum or shasum to check the download"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

fetch "$base/SHA256SUMS" "$tmp/SHA256SUMS" || fail "could not download $base/SHA256SUMS (is $version a released version?)"
fetch "$base/$archive" "$tmp/$archive" || fail "could not download $base/$archive"

expected="$(awk -v name="$archive" '$2 == name || $2 == "*" name { print $1; exit }' "$tmp/SHA256SUMS")"
[ -n "$expected" ] || fail "SHA256SUMS from $base lists no $archive; nothing was installed"
actual="$(sha256 "$tmp/$archive")"
if [ "$actual" != "$expected" ]; then
  fail "$archive does not match SHA256SUMS (expected $expected, got $actual): the download is corrupt or was altered; nothing was installed"
fi

mkdir -p "$tmp/unpacked"
tar -xzf "$tmp/$archive" -C "$tmp/unpacked" weir || fail "$archive holds no weir binary"
mkdir -p "$install_dir" || fail "cannot create $install_dir; set WEIR_INSTALL_DIR to a directory you can write"
# Copy next to the target, check that it runs, then rename over the old one in one step.
new="$install_dir/.weir.new"
cp "$tmp/unpacked/weir" "$new" || fail "cannot write to $install_dir; set WEIR_INSTALL_DIR to a directory you can write"
chmod 755 "$new"
if ! "$new" --version >"$tmp/version" 2>&1; then
  rm -f "$new"
  fail "the downloaded weir does not run on this system ($(head -n 1 "$tmp/version")); nothing was installed"
fi
mv -f "$new" "$install_dir/weir"

printf '%s installed at %s\n' "$(head -n 1 "$tmp/version")" "$install_dir/weir"
# shellcheck disable=SC2016 # $PATH is meant literally: the line goes into the user's profile.
case ":$PATH:" in
  *":$install_dir:"*) ;;
  *) printf '%s is not on your PATH; add it, e.g. in ~/.profile:\n  export PATH="%s:$PATH"\n' "$install_dir" "$install_dir" ;;
esac
