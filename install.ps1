# Installs the triforge binary for Windows from GitHub releases.
#
#   irm https://raw.githubusercontent.com/ilyasmukiev/triforge/main/install.ps1 | iex
#
# Environment:
#   TRIFORGE_VERSION          a release such as 0.2.0 (default: the latest release)
#   TRIFORGE_INSTALL_DIR      where triforge.exe goes (default: ~\.local\bin)
#   TRIFORGE_DOWNLOAD_URL     a base URL holding the release assets and SHA256SUMS (a mirror, or a local test server)
#   TRIFORGE_NO_MODIFY_PATH   set to 1 to leave the user PATH alone
#
# The asset (triforge-windows-x64.zip; the bare .exe of releases before archives) is checked against the
# release's SHA256SUMS, and the binary in it must run and name the version asked for, before anything is
# installed.

$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue' # the progress bar makes Invoke-WebRequest many times slower

function Install-Triforge {
  $repo = 'ilyasmukiev/triforge'

  $onWindows = ($PSVersionTable.PSEdition -eq 'Desktop') -or $IsWindows
  if (-not $onWindows) {
    throw "install.ps1 is for Windows; on Linux and macOS run: curl -fsSL https://raw.githubusercontent.com/$repo/main/install.sh | sh"
  }
  # x64 builds also run on Windows on Arm through its x64 emulation.
  $arch = [System.Runtime.InteropServices.RuntimeInformation]::OSArchitecture.ToString()
  if ($arch -ne 'X64' -and $arch -ne 'Arm64') {
    throw "no triforge build for the $arch processor; builds exist for x64 (and run on Arm64)"
  }
  $asset = 'triforge-windows-x64.zip'
  $bareAsset = 'triforge-windows-x64.exe'

  $version = if ($env:TRIFORGE_VERSION) { $env:TRIFORGE_VERSION.TrimStart('v') } else { 'latest' }
  if ($env:TRIFORGE_DOWNLOAD_URL) {
    $base = $env:TRIFORGE_DOWNLOAD_URL.TrimEnd('/')
  } elseif ($version -eq 'latest') {
    $base = "https://github.com/$repo/releases/latest/download"
  } else {
    $base = "https://github.com/$repo/releases/download/v$version"
  }
  $installDir = if ($env:TRIFORGE_INSTALL_DIR) { $env:TRIFORGE_INSTALL_DIR } else { Join-Path $HOME '.local\bin' }

  $tmp = Join-Path ([System.IO.Path]::GetTempPath()) ("triforge-" + [System.Guid]::NewGuid().ToString('N'))
  New-Item -ItemType Directory -Path $tmp | Out-Null
  try {
    $sumsFile = Join-Path $tmp 'SHA256SUMS'
    try {
      Invoke-WebRequest -UseBasicParsing -Uri "$base/SHA256SUMS" -OutFile $sumsFile
    } catch {
      if ($version -eq 'latest') { throw "cannot download $base/SHA256SUMS ($($_.Exception.Message))" }
      throw "no triforge release $version at $base (cannot download its SHA256SUMS); the releases are listed at https://github.com/$repo/releases"
    }
    $sums = @{}
    foreach ($line in Get-Content $sumsFile) {
      $fields = $line.Trim() -split '\s+'
      if ($fields.Count -ge 2) { $sums[$fields[1].TrimStart('*')] = $fields[0].ToLower() }
    }
    # Releases from 0.2.0 on ship a zip; older ones the bare .exe.
    if (-not $sums.ContainsKey($asset) -and $sums.ContainsKey($bareAsset)) { $asset = $bareAsset }
    $expected = $sums[$asset]
    if (-not $expected) { throw "SHA256SUMS has no entry for $asset" }

    Write-Host "Downloading $asset ($version) from $base"
    $download = Join-Path $tmp $asset
    try {
      Invoke-WebRequest -UseBasicParsing -Uri "$base/$asset" -OutFile $download
    } catch {
      throw "cannot download $base/$asset ($($_.Exception.Message))"
    }
    $actual = (Get-FileHash -Algorithm SHA256 -Path $download).Hash.ToLower()
    if ($actual -ne $expected) {
      throw "checksum mismatch for $asset (expected $expected, got $actual): refusing to install"
    }
    $binary = $download
    if ($asset.EndsWith('.zip')) {
      $unpacked = Join-Path $tmp 'unpacked'
      Expand-Archive -Path $download -DestinationPath $unpacked
      $binary = Join-Path $unpacked 'triforge.exe'
      if (-not (Test-Path $binary)) { throw "$asset holds no triforge.exe: refusing to install" }
    }

    # Before anything is replaced: a mirror (or a release) that holds another version than the one asked for is refused.
    $installed = $null
    try { $installed = (& $binary --version) 2>$null } catch { $installed = $null }
    if ($version -ne 'latest' -and $installed -and $installed -ne "triforge $version") {
      throw "asked for $version, but $base holds $($installed -replace '^triforge ', ''): refusing to install"
    }

    New-Item -ItemType Directory -Force -Path $installDir | Out-Null
    $target = Join-Path $installDir 'triforge.exe'
    # A running triforge.exe cannot be overwritten on Windows, but it can be renamed out of the way.
    if (Test-Path $target) {
      $old = "$target.old"
      Remove-Item -Force -ErrorAction SilentlyContinue $old
      Move-Item -Force $target $old
    }
    Move-Item -Force $binary $target
    Remove-Item -Force -ErrorAction SilentlyContinue "$target.old"
  } finally {
    Remove-Item -Recurse -Force -ErrorAction SilentlyContinue $tmp
  }

  if ($installed) { Write-Host "Installed $installed to $target" }
  else { Write-Host "Installed $target (warning: it did not run here: '$target --version' failed)" }

  $command = 'triforge'
  $userPath = [Environment]::GetEnvironmentVariable('Path', 'User')
  $onPath = ($env:Path -split ';') -contains $installDir
  if (-not $onPath) {
    if ($env:TRIFORGE_NO_MODIFY_PATH -eq '1') {
      $command = "& '$($target -replace "'", "''")'"
      Write-Host ""
      Write-Host "$installDir is not on your PATH. Add it with:"
      Write-Host "  [Environment]::SetEnvironmentVariable('Path', `"$installDir;`" + [Environment]::GetEnvironmentVariable('Path', 'User'), 'User')"
    } else {
      $newPath = if ($userPath) { "$installDir;$userPath" } else { $installDir }
      [Environment]::SetEnvironmentVariable('Path', $newPath, 'User')
      $env:Path = "$installDir;$env:Path"
      Write-Host "Added $installDir to your user PATH (new terminals will see it)."
    }
  }
  # Another triforge earlier on PATH would run instead of this one.
  $found = Get-Command triforge -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1
  if ($found -and $found.Source -ne $target) {
    $other = $null
    try { $other = (& $found.Source --version) 2>$null } catch { $other = $null }
    if (-not $other) { $other = 'a triforge that does not answer --version' }
    Write-Host ""
    Write-Host "warning: $($found.Source) comes first on your PATH, so ``triforge`` runs it ($other), not the one just installed."
    Write-Host "  Remove it, or put $installDir before $(Split-Path $found.Source) in PATH."
    $command = "& '$($target -replace "'", "''")'"
  }
  Write-Host ""
  Write-Host "Next: run ``$command install`` to connect triforge to your coding agents."
}

try {
  Install-Triforge
} catch {
  [Console]::Error.WriteLine("triforge install: $($_.Exception.Message)")
  # `irm | iex` runs in the caller's session: exit would close the user's terminal, so only scripts exit.
  if ($MyInvocation.MyCommand.Path) { exit 1 }
}
