#!/bin/sh
# Installs the triforge binary for this machine from GitHub releases.
#
#   curl -fsSL https://raw.githubusercontent.com/ilyasmukiev/triforge/main/install.sh | sh
#
# Environment:
#   TRIFORGE_VERSION       a release such as 0.2.0 (default: the latest release)
#   TRIFORGE_INSTALL_DIR   where the binary goes (default: ~/.local/bin)
#   TRIFORGE_DOWNLOAD_URL  a base URL holding the release assets and SHA256SUMS (a mirror, or a local test server)
#
# The asset (triforge-<os>-<arch>.tar.gz; the bare binary of releases before archives) is checked against
# the release's SHA256SUMS, and the binary in it must run and name the version asked for, before anything
# is installed.
set -eu

REPO="ilyasmukiev/triforge"

say() { printf '%s\n' "$*"; }
fail() {
  printf 'triforge install: %s\n' "$*" >&2
  exit 1
}

detect_target() {
  os=$(uname -s)
  arch=$(uname -m)
  case "$os" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    MINGW* | MSYS* | CYGWIN* | Windows_NT)
      fail "on Windows, run in PowerShell: irm https://raw.githubusercontent.com/$REPO/main/install.ps1 | iex" ;;
    *) fail "no triforge build for $os; builds exist for Linux, macOS and Windows" ;;
  esac
  case "$arch" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) fail "no triforge build for the $arch processor; builds exist for x86_64 and arm64" ;;
  esac
  # A shell under Rosetta reports x86_64 on Apple silicon: the native build is faster.
  if [ "$os" = darwin ] && [ "$arch" = x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
    arch=arm64
  fi
  # The Linux builds link against glibc; musl systems (Alpine) cannot run them.
  if [ "$os" = linux ] && ls /lib/ld-musl-* >/dev/null 2>&1 && ! ls /lib*/ld-linux-* >/dev/null 2>&1; then
    fail "this Linux uses musl libc (Alpine?); the triforge builds need glibc"
  fi
  say "$os-$arch"
}

# Downloads url to file; with "progress", a bar on a terminal (stderr), silence otherwise. Returns 1 on failure.
download() { # url file [progress]
  if command -v curl >/dev/null 2>&1; then
    if [ "${3:-}" = progress ] && [ -t 2 ]; then
      curl -fL --retry 2 --progress-bar -o "$2" "$1"
    else
      curl -fsSL --retry 2 -o "$2" "$1"
    fi
  elif command -v wget >/dev/null 2>&1; then
    if [ "${3:-}" = progress ] && [ -t 2 ] && wget --help 2>&1 | grep -q -- --show-progress; then
      wget -q --show-progress -O "$2" "$1"
    else
      wget -q -O "$2" "$1"
    fi
  else
    fail "neither curl nor wget is installed"
  fi
}

# The sha256 SHA256SUMS lists for an asset name, or nothing.
listed_sum() { # name
  awk -v name="$1" '$2 == name || $2 == "*" name { print $1; exit }' "$tmp/SHA256SUMS"
}

sha256_of() { # file
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 "$1" | sed 's/^.*= *//'
  else
    fail "no sha256 tool (sha256sum, shasum or openssl) to verify the download with"
  fi
}

# Quotes a path for a POSIX shell, so that the printed next step can be pasted as it is.
shell_quote() {
  printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

main() {
  target=$(detect_target)
  version="${TRIFORGE_VERSION:-latest}"
  version="${version#v}"
  if [ -n "${TRIFORGE_DOWNLOAD_URL:-}" ]; then
    base="${TRIFORGE_DOWNLOAD_URL%/}"
  elif [ "$version" = latest ]; then
    base="https://github.com/$REPO/releases/latest/download"
  else
    base="https://github.com/$REPO/releases/download/v$version"
  fi
  install_dir="${TRIFORGE_INSTALL_DIR:-$HOME/.local/bin}"

  tmp=$(mktemp -d 2>/dev/null || mktemp -d -t triforge)
  trap 'rm -rf "$tmp"' EXIT
  trap 'exit 130' INT TERM

  if ! download "$base/SHA256SUMS" "$tmp/SHA256SUMS"; then
    [ "$version" = latest ] && fail "cannot download $base/SHA256SUMS"
    fail "no triforge release $version at $base (cannot download its SHA256SUMS); the releases are listed at https://github.com/$REPO/releases"
  fi
  # Releases from 0.2.0 on ship archives; older ones the bare binary.
  asset="triforge-$target.tar.gz"
  expected=$(listed_sum "$asset")
  if [ -z "$expected" ] && [ -n "$(listed_sum "triforge-$target")" ]; then
    asset="triforge-$target"
    expected=$(listed_sum "$asset")
  fi
  [ -n "$expected" ] || fail "SHA256SUMS has no entry for $asset"

  say "Downloading $asset ($version) from $base"
  download "$base/$asset" "$tmp/$asset" progress || fail "cannot download $base/$asset"
  actual=$(sha256_of "$tmp/$asset")
  if [ "$actual" != "$expected" ]; then
    fail "checksum mismatch for $asset (expected $expected, got $actual): refusing to install"
  fi
  case "$asset" in
    *.tar.gz)
      mkdir "$tmp/unpacked"
      tar -xzf "$tmp/$asset" -C "$tmp/unpacked" triforge 2>/dev/null || fail "$asset holds no triforge binary: refusing to install"
      binary="$tmp/unpacked/triforge"
      ;;
    *) binary="$tmp/$asset" ;;
  esac
  chmod 755 "$binary"

  # Before anything is replaced: a mirror (or a release) that holds another version than the one asked for is refused.
  installed=$("$binary" --version 2>/dev/null) || installed=""
  if [ "$version" != latest ] && [ -n "$installed" ] && [ "$installed" != "triforge $version" ]; then
    fail "asked for $version, but $base holds ${installed#triforge }: refusing to install"
  fi

  mkdir -p "$install_dir" || fail "cannot create $install_dir"
  # Copy next to the target, then rename: atomic, and safe while an older triforge is running.
  cp "$binary" "$install_dir/.triforge.new.$$" || fail "cannot write to $install_dir"
  mv -f "$install_dir/.triforge.new.$$" "$install_dir/triforge" || fail "cannot replace $install_dir/triforge"

  if [ -n "$installed" ]; then
    say "Installed $installed to $install_dir/triforge"
  else
    say "Installed $install_dir/triforge (warning: it did not run here: '$install_dir/triforge --version' failed)"
  fi
  case ":${PATH:-}:" in
    *":$install_dir:"*) command_name=triforge ;;
    *)
      command_name=$(shell_quote "$install_dir/triforge")
      say ""
      say "$install_dir is not on your PATH. Add it, e.g. in ~/.profile:"
      say "  export PATH=\"$install_dir:\$PATH\""
      ;;
  esac
  # Another triforge earlier on PATH would run instead of this one.
  found=$(command -v triforge 2>/dev/null) || found=""
  if [ -n "$found" ] && [ "$found" != "$install_dir/triforge" ]; then
    other=$("$found" --version 2>/dev/null) || other="a triforge that does not answer --version"
    say ""
    say "warning: $found comes first on your PATH, so \`triforge\` runs it ($other), not the one just installed."
    say "  Remove it, or put $install_dir before $(dirname "$found") in PATH."
    command_name=$(shell_quote "$install_dir/triforge")
  fi
  say ""
  say "Next: run \`$command_name install\` to connect triforge to your coding agents."
}

main "$@"
